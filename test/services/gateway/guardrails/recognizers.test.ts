import { describe, expect, it } from "vitest";
import {
  BUILT_IN_ENTITIES,
  ibanValid,
  luhnValid,
  recognize,
} from "../../../../services/gateway/src/guardrails/pii/recognizers.js";

const all = new Set(BUILT_IN_ENTITIES);

/** The [entity, matched text] pairs found in `text`. */
function found(text: string, entities: ReadonlySet<string> = all): Array<[string, string]> {
  return recognize(text, entities)
    .sort((a, b) => a.start - b.start)
    .map((s) => [s.entityType, text.slice(s.start, s.end)]);
}

describe("built-in recognizers: true positives", () => {
  it.each([
    ["mail me at jane.doe+tag@mail.example.org today", "EMAIL_ADDRESS", "jane.doe+tag@mail.example.org"],
    ["<jane@example.com>, then a period.", "EMAIL_ADDRESS", "jane@example.com"],
    ["write to ..bob_smith@sub.example.co.uk.", "EMAIL_ADDRESS", "bob_smith@sub.example.co.uk"],
    ["card 4111 1111 1111 1111 exp 12/29", "CREDIT_CARD", "4111 1111 1111 1111"],
    ["card 4111-1111-1111-1111.", "CREDIT_CARD", "4111-1111-1111-1111"],
    ["amex 378282246310005", "CREDIT_CARD", "378282246310005"],
    ["IBAN DE89 3704 0044 0532 0130 00 please", "IBAN_CODE", "DE89 3704 0044 0532 0130 00"],
    ["IBAN GB82WEST12345698765432", "IBAN_CODE", "GB82WEST12345698765432"],
    ["server at 192.168.10.254:8080", "IP_ADDRESS", "192.168.10.254"],
    ["v6 2001:db8:85a3::8a2e:370:7334 here", "IP_ADDRESS", "2001:db8:85a3::8a2e:370:7334"],
    ["loopback ::1 ok", "IP_ADDRESS", "::1"],
    ["ssn 536-22-1234 on file", "US_SSN", "536-22-1234"],
    ["call +44 20 7946 0958 now", "PHONE_NUMBER", "+44 20 7946 0958"],
    ["call (415) 555-0132 now", "PHONE_NUMBER", "(415) 555-0132"],
    ["call 415-555-0132", "PHONE_NUMBER", "415-555-0132"],
    ["key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 leaked", "API_KEY", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234"],
    ["aws AKIAIOSFODNN7EXAMPLE id", "API_KEY", "AKIAIOSFODNN7EXAMPLE"],
    [
      "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 token",
      "API_KEY",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    ],
    [
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
      "API_KEY",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
  ])("%s → %s", (text, entity, value) => {
    expect(found(text)).toContainEqual([entity, value]);
  });

  it("finds several entities in one text with offsets into the JS string (emoji before them)", () => {
    const text = "😀 a@b.io and 4111111111111111";
    expect(found(text)).toEqual([
      ["EMAIL_ADDRESS", "a@b.io"],
      ["CREDIT_CARD", "4111111111111111"],
    ]);
  });

  it("runs only the recognizers of the entities asked for", () => {
    expect(found("a@b.io 4111111111111111", new Set(["CREDIT_CARD"]))).toEqual([
      ["CREDIT_CARD", "4111111111111111"],
    ]);
  });
});

describe("built-in recognizers: near-misses", () => {
  it.each([
    ["a 16-digit number failing Luhn", "order 4111111111111112"],
    ["a Luhn-valid number with a non-card prefix", "ref 0000000000000000"],
    ["too few digits", "pin 411111111111"],
    ["an IBAN with a wrong check digit", "IBAN DE88 3704 0044 0532 0130 00"],
    ["an impossible IPv4", "version 999.1.2.3"],
    ["a dotted version number", "release 1.2.3"],
    ["a time of day", "meet at 12:30:45"],
    ["an SSN with area 000", "000-12-3456"],
    ["an SSN with area 9xx", "912-12-3456"],
    ["an SSN with mixed separators", "536-22 1234"],
    ["an ISO date", "due 2024-01-15"],
    ["an email without a domain suffix", "user@localhost"],
    ["a handle and a double @", "@channel ping @@ a@ @b.io"],
    ["a short sk- word", "task sk-short"],
    ["AKIA with lowercase", "AKIAiosfodnn7example"],
  ])("%s: %s", (_name, text) => {
    expect(found(text)).toEqual([]);
  });

  it("checksums", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(ibanValid("GB82WEST12345698765432")).toBe(true);
    expect(ibanValid("GB83WEST12345698765432")).toBe(false);
  });
});
