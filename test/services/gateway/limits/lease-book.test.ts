/**
 * The lease book's memory of keys used once (docs/leases.md, "Keys used less often than a lease lives"): once
 * a one-call slice is returned, the instance keeps nothing for its key, so a gateway that saw 100,000 keys once
 * sweeps an empty book while idle. No Redis: the book is driven as the Redis admitter drives it.
 */
import { describe, expect, it } from "vitest";
import { LEASE_IDLE_MS } from "../../../../services/gateway/src/limits/lease.js";
import { LeaseBook } from "../../../../services/gateway/src/limits/leases.js";
import { planSubjects } from "../../../../services/gateway/src/limits/rules.js";
import { keySubject, T0 } from "./subjects.js";

describe("LeaseBook with many keys used once", () => {
  it("forgets every returned one-call slice: 10,000 keys leave nothing to sweep once idle", () => {
    const book = new LeaseBook();
    const now = T0 + 1_000;
    const estimate = 2_000; // micro-USD
    const plans = Array.from({ length: 10_000 }, () =>
      planSubjects([keySubject({ rpmLimit: 1_000, tpmLimit: 1_000_000, maxBudget: 100 })]),
    );
    for (const [i, [plan]] of plans.entries()) {
      const s = book.snapshot(book.lease(plan!), plan!, now, `i.${i}`, { estimate, tokens: 100 });
      book.granted(s, { requests: 1, tokens: 100, budget: estimate }, now);
      book.commit([plan!], estimate, now).settle({ cost: 0.001, totalTokens: 42 });
    }
    expect(book.leases.size).toBe(10_000);

    // The sweep after the idle time: every lease is due, returned (nothing granted), then pruned.
    const later = now + LEASE_IDLE_MS;
    const wall = performance.now() + LEASE_IDLE_MS;
    const due = [...book.leases.values()].filter((lease) => book.due(lease, later, wall, false));
    expect(due.length).toBe(10_000);
    for (const [i, lease] of due.entries()) {
      const s = book.snapshot(lease, lease.plan, later, `r.${i}`, undefined);
      book.granted(s, { requests: 0, tokens: 0, budget: 0 }, later);
    }
    book.reclaim(later);
    book.prune();
    expect(book.leases.size).toBe(0);
  });
});
