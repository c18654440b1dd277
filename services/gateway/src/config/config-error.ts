/**
 * The error of a model config file that cannot be used (config/load-model-config.ts).
 */

/**
 * The config file cannot be used. `message` is written for the operator: it names the file, the path inside
 * it with line and column where known, the expected type or the known keys, and for environment references
 * the variable, the entries using it and what to do. It never contains a value from the file or the env.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** Absolute path of the config file. */
  readonly file: string;
  /** One line per problem; `message` joins them. */
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super(
      problems.length === 1
        ? (problems[0] ?? "")
        : `${problems.length} problems in model config ${file}:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.file = file;
    this.problems = problems;
  }
}
