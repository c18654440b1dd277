/** Builders shared by the limits suites: subjects, requests and a refusal catcher. */
import { randomBytes } from "node:crypto";
import { GatewayError } from "../../../../services/gateway/src/errors/gateway-error.js";
import type { AdmissionRequest, LimitSubject } from "../../../../services/gateway/src/limits/types.js";
import { rejectionOf } from "../../../helpers/rejection.js";

/** 2026-01-01T00:00:00Z, a window boundary. */
export const T0 = Date.UTC(2026, 0, 1);

/** A key subject with a fresh random hash and no limits unless given. */
export function keySubject(overrides: Partial<LimitSubject> = {}): LimitSubject {
  return {
    scope: "key",
    id: randomBytes(32).toString("hex"),
    rpmLimit: null,
    tpmLimit: null,
    maxBudget: null,
    budgetDuration: null,
    budgetResetAt: null,
    spend: 0,
    ...overrides,
  };
}

/** A user subject with a fresh random id and no limits unless given. */
export function userSubject(overrides: Partial<LimitSubject> = {}): LimitSubject {
  return keySubject({ scope: "user", id: `user-${randomBytes(4).toString("hex")}`, ...overrides });
}

/** A request for `subjects` with the given estimate (USD) and 100 estimated tokens. */
export function request(subjects: LimitSubject[], estimatedCost = 0): AdmissionRequest {
  return { subjects, model: "general", estimatedCost, estimatedTokens: 100 };
}

/** The GatewayError `promise` rejects with; fails when it resolves or rejects with anything else. */
export function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  return rejectionOf(promise, GatewayError);
}
