/**
 * A compact set of key-hash prefixes: the first 8 bytes (16 hex characters) of SHA-256 key hashes, kept as two
 * 32-bit words per slot in one `Uint32Array` (open addressing, linear probing, at most 3/4 full, doubled when it
 * would be fuller). 8 bytes per slot: 100,000 keys take 262,144 slots, 2 MiB; a `Set` of hex strings would take
 * several times that. Entries are never removed (a revoked key's prefix only costs its lookups, which its
 * cached record then answers).
 *
 * Since the hashes are SHA-256 of random keys, the low word is already uniformly spread and serves as the slot
 * index. Two different keys share a prefix with probability ~n/2^64: a false "maybe", which costs one lookup.
 */

/** Slots of a new set (a power of two). */
const INITIAL_SLOTS = 1024;

/** The two 32-bit words of a hash's first 8 bytes. */
function words(hash: string): [number, number] {
  return [Number.parseInt(hash.slice(0, 8), 16) >>> 0, Number.parseInt(hash.slice(8, 16), 16) >>> 0];
}

/** Set of the first 8 bytes of SHA-256 hex hashes; see the module comment. */
export class HashPrefixSet {
  /** Slot i is words 2i (high) and 2i + 1 (low); 0/0 marks an empty slot. */
  private slots = new Uint32Array(INITIAL_SLOTS * 2);
  private count = 0;
  /** Whether the all-zero prefix (which the empty marker cannot hold) is in the set. */
  private zero = false;

  /** Number of distinct prefixes held. */
  get size(): number {
    return this.count + (this.zero ? 1 : 0);
  }

  /** Bytes of the slot array (the set's memory, apart from a few fields). */
  get byteLength(): number {
    return this.slots.byteLength;
  }

  /** Adds the prefix of `hash` (lowercase hex, at least 16 characters: a SHA-256 hex or its first 8 bytes). */
  add(hash: string): void {
    const [high, low] = words(hash);
    if (high === 0 && low === 0) {
      this.zero = true;
      return;
    }
    if ((this.count + 1) * 4 > (this.slots.length / 2) * 3) this.grow();
    if (this.insert(this.slots, high, low)) this.count += 1;
  }

  /** Whether the prefix of `hash` was added (see {@link add} for the format). */
  has(hash: string): boolean {
    const [high, low] = words(hash);
    if (high === 0 && low === 0) return this.zero;
    const slots = this.slots;
    const mask = slots.length / 2 - 1;
    for (let i = low & mask; ; i = (i + 1) & mask) {
      const h = slots[2 * i];
      const l = slots[2 * i + 1];
      if (h === 0 && l === 0) return false;
      if (h === high && l === low) return true;
    }
  }

  /** Puts a nonzero prefix in `slots`; false when it was there already. */
  private insert(slots: Uint32Array, high: number, low: number): boolean {
    const mask = slots.length / 2 - 1;
    for (let i = low & mask; ; i = (i + 1) & mask) {
      const h = slots[2 * i];
      const l = slots[2 * i + 1];
      if (h === high && l === low) return false;
      if (h === 0 && l === 0) {
        slots[2 * i] = high;
        slots[2 * i + 1] = low;
        return true;
      }
    }
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) {
      const high = old[i] as number;
      const low = old[i + 1] as number;
      if (high !== 0 || low !== 0) this.insert(slots, high, low);
    }
    this.slots = slots;
  }
}
