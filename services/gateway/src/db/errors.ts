/**
 * Classifies errors from `pg`: is the database unreachable (an outage: retry later, answer 503), did it refuse
 * the data (retrying the same rows cannot help), or is the configuration wrong (fail at start-up at once)?
 * SQLSTATE codes: PostgreSQL manual, appendix A "PostgreSQL Error Codes".
 */

/** Node socket errors that mean "cannot reach the server now". */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Messages of `pg` and `pg-pool` for a lost, refused or timed-out connection (they carry no code). */
const PG_CONNECTION_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error and is not queryable|Cannot use a pool after calling end|no answer within/i;

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
};

/**
 * True when `error` means Postgres cannot be reached or cannot serve now: a socket error, a lost or timed-out
 * connection, SQLSTATE class 08 (connection exception), 53 (insufficient resources, e.g. too many
 * connections) or 57P01–57P03 (shutting down, cannot connect now). An `AggregateError` (several addresses
 * tried) counts when any of its errors does.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  const code = codeOf(error);
  if (code !== undefined) {
    if (NETWORK_CODES.has(code)) return true;
    if (code.startsWith("08") || code.startsWith("53")) return true;
    if (code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  return error instanceof Error && PG_CONNECTION_MESSAGE.test(error.message);
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): retrying the same rows cannot help. */
export function isDataError(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (code.startsWith("22") || code.startsWith("23"));
}

/**
 * A refusal that waiting cannot cure: the database does not exist (3D000), the login is refused (28000,
 * 28P01), or the role lacks the right to connect (42501). Start-up fails at once on these.
 * @returns a sentence for the operator, or undefined when `error` is not such a refusal.
 */
export function permanentConnectionProblem(error: unknown): string | undefined {
  switch (codeOf(error)) {
    case "3D000":
      return "the database does not exist (create it, or fix the database name in DATABASE_URL)";
    case "28000":
    case "28P01":
      return "the login was refused (check the user and password in DATABASE_URL)";
    case "42501":
      return "the user may not connect to this database (grant CONNECT, or use another user)";
    default:
      return undefined;
  }
}
