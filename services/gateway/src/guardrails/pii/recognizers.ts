/**
 * Built-in PII recognizers, used when no Presidio analyzer is configured (PII_ANALYZER_API_BASE unset). They run
 * in process on the hot path, so each is a regular expression plus a checksum or range check, and a recognizer
 * runs only when the policy acts on its entity and a cheap pre-check (an `@`, a digit, a `:`) passes.
 *
 * Entity names and score levels follow Presidio's predefined recognizers (EMAIL_ADDRESS, PHONE_NUMBER,
 * CREDIT_CARD with Luhn, IBAN_CODE with ISO 13616 mod 97, IP_ADDRESS, US_SSN); `API_KEY` is this gateway's name
 * for API-key-like secrets (`sk-…`, `AKIA…`, `ghp_…`, JWTs). Scores: 1.0 when a checksum validated the match,
 * lower for shape-only matches (phone numbers 0.75, SSN 0.85), so `score_threshold` can tune them.
 */
import { isIPv4, isIPv6 } from "node:net";
import { SECRET_ENTITY } from "../policy/entities.js";
import type { PiiAnalyzer, PiiSpan } from "./analyzer.js";

interface Recognizer {
  entity: string;
  /** Cheap test that must pass before the pattern runs. */
  precheck: (text: string) => boolean;
  /** Global pattern whose matches are candidates. */
  pattern?: RegExp;
  /** Instead of a pattern: candidate [start, end) ranges. */
  find?: (text: string) => Array<[number, number]>;
  /** Score of a candidate, or 0 to drop it (failed checksum or range). */
  score: (match: string) => number;
}

const hasDigit = (t: string) => /\d/.test(t);

/** Luhn checksum over the digits of a string (ISO/IEC 7812-1). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ISO 13616 IBAN check: move the first four characters to the end, letters → 10..35, remainder mod 97 is 1. */
export function ibanValid(iban: string): boolean {
  const s = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    rest = value >= 10 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest === 1;
}

function cardScore(match: string): number {
  const digits = match.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19 || !/^[2-6]/.test(digits)) return 0;
  return luhnValid(digits) ? 1 : 0;
}

function ssnScore(match: string): number {
  const [area, group, serial] = match.split(/[- ]/);
  if (area === undefined || group === undefined || serial === undefined) return 0;
  if (area === "000" || area === "666" || area.startsWith("9") || group === "00" || serial === "0000")
    return 0;
  return 0.85;
}

const localChar = /[A-Za-z0-9._%+-]/;
const domainChar = /[A-Za-z0-9.-]/;
const emailShape = /^[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}$/;

/**
 * Email candidates, found from each `@` outwards (a pattern starting at every character of the text costs
 * ten times more on prose).
 */
function findEmails(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && localChar.test(text[start - 1] ?? "")) start--;
    while (start < at && !/[A-Za-z0-9]/.test(text[start] ?? "")) start++;
    let end = at + 1;
    while (end < text.length && domainChar.test(text[end] ?? "")) end++;
    while (end > at + 1 && /[.-]/.test(text[end - 1] ?? "")) end--;
    if (emailShape.test(text.slice(start, end))) out.push([start, end]);
  }
  return out;
}

const recognizers: readonly Recognizer[] = [
  {
    entity: "EMAIL_ADDRESS",
    precheck: (t) => t.includes("@"),
    find: findEmails,
    score: () => 1,
  },
  {
    entity: "CREDIT_CARD",
    precheck: hasDigit,
    pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g,
    score: cardScore,
  },
  {
    entity: "IBAN_CODE",
    precheck: hasDigit,
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/g,
    score: (m) => {
      const iban = m.replace(/ /g, "");
      return iban.length >= 15 && iban.length <= 34 && ibanValid(iban) ? 1 : 0;
    },
  },
  {
    entity: "US_SSN",
    precheck: hasDigit,
    pattern: /(?<![\d-])\d{3}([- ])\d{2}\1\d{4}(?![\d-])/g,
    score: ssnScore,
  },
  {
    entity: "PHONE_NUMBER",
    precheck: hasDigit,
    // International (+CC and 7 to 14 more digits in groups) or North American ((555) 123-4567, 555-123-4567).
    pattern:
      /(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4})(?!\w)/g,
    score: (m) => {
      const digits = m.replace(/\D/g, "").length;
      return digits >= 8 && digits <= 15 ? 0.75 : 0;
    },
  },
  {
    entity: "IP_ADDRESS",
    precheck: (t) => /\d\.\d|[0-9A-Fa-f]:[0-9A-Fa-f:]|::/.test(t),
    // IPv4 (a port may follow) or IPv6 (groups of hex digits with colons, "::" shortening).
    pattern:
      /(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}(?!\.?\d|\w)|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:]))/g,
    score: (m) => (isIPv4(m) || (m.length > 2 && /[0-9A-Fa-f]/.test(m) && isIPv6(m)) ? 0.95 : 0),
  },
  {
    entity: SECRET_ENTITY,
    precheck: (t) => /sk-|AKIA|gh[pousr]_|eyJ/.test(t),
    pattern:
      /(?<![\w-])(?:sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,255}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![\w-])/g,
    score: () => 0.95,
  },
];

/** Entity names the built-in recognizers can find. */
export const BUILT_IN_ENTITIES: readonly string[] = recognizers.map((r) => r.entity);

/**
 * Finds PII in one text.
 * @param entities the entity names to look for (others are skipped).
 * @returns spans with UTF-16 offsets into `text`, unsorted, possibly overlapping.
 */
export function recognize(text: string, entities: ReadonlySet<string>): PiiSpan[] {
  const spans: PiiSpan[] = [];
  for (const r of recognizers) {
    if (!entities.has(r.entity) || !r.precheck(text)) continue;
    const ranges = r.find
      ? r.find(text)
      : [...text.matchAll(r.pattern ?? /$^/g)].map((m): [number, number] => [m.index, m.index + m[0].length]);
    for (const [start, end] of ranges) {
      const score = r.score(text.slice(start, end));
      if (score > 0) spans.push({ entityType: r.entity, start, end, score });
    }
  }
  return spans;
}

/** The in-process analyzer over the built-in recognizers. */
export const builtInAnalyzer: PiiAnalyzer = {
  kind: "built-in",
  async analyze(texts, entities) {
    const wanted = new Set(entities);
    return texts.map((text) => recognize(text, wanted));
  },
};
