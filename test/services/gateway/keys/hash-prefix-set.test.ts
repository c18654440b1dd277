/**
 * The compact set of key-hash prefixes behind the known-key filter: it holds what was added, nothing else, and
 * stays within a few MB at 100,000 keys.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HashPrefixSet } from "../../../../services/gateway/src/keys/hash-prefix-set.js";

const randomHash = () => createHash("sha256").update(randomBytes(16)).digest("hex");

describe("HashPrefixSet", () => {
  it("holds 100,000 key hashes in at most 4 MiB, finds each, and none of 100,000 others", () => {
    const set = new HashPrefixSet();
    const added = Array.from({ length: 100_000 }, randomHash);
    for (const hash of added) set.add(hash);
    expect(set.size).toBe(100_000);
    expect(set.byteLength).toBeLessThanOrEqual(4 * 1024 * 1024);
    console.info(`100,000 key-hash prefixes: ${(set.byteLength / 1024 / 1024).toFixed(1)} MiB`);
    expect(added.every((hash) => set.has(hash))).toBe(true);
    const others = Array.from({ length: 100_000 }, randomHash);
    expect(others.filter((hash) => set.has(hash))).toEqual([]);
  });

  it("compares the first 8 bytes only, counts a prefix once, and holds the all-zero prefix", () => {
    const set = new HashPrefixSet();
    const hash = randomHash();
    set.add(hash);
    set.add(`${hash.slice(0, 16)}${"0".repeat(48)}`);
    expect(set.size).toBe(1);
    expect(set.has(`${hash.slice(0, 16)}${"f".repeat(48)}`)).toBe(true);
    expect(set.has(`${hash.slice(0, 15)}${hash[15] === "0" ? "1" : "0"}${hash.slice(16)}`)).toBe(false);
    expect(set.has("0".repeat(64))).toBe(false);
    set.add("0".repeat(64));
    expect(set.has("0".repeat(64))).toBe(true);
    expect(set.size).toBe(2);
  });
});
