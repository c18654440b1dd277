/**
 * The error a promise rejects with, checked against the class the test expects: the one place tests turn "this
 * call must fail" into a value they can assert on.
 */

/**
 * Awaits `promise` and returns what it rejected with. Fails the test (throws) when the promise resolves, or when
 * it rejects with something that is not an instance of `type` (that rejection is rethrown, so its own message and
 * stack show).
 */
export async function rejectionOf<T>(
  promise: Promise<unknown>,
  type: abstract new (...args: never[]) => T,
): Promise<T> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a rejection with ${type.name}, but the promise resolved`);
}
