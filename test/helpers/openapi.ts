/**
 * Validates gateway answers against OpenAI's published schemas: the component schemas of OpenAI's OpenAPI
 * description (github.com/openai/openai-openapi) that the gateway's answers use, checked in as
 * `test/fixtures/openai-openapi-schemas.json` (the closure of `Response`, `ResponseStreamEvent`,
 * `CreateEmbeddingResponse`, `CreateCompletionResponse`, `CreateChatCompletionResponse`,
 * `CreateChatCompletionStreamResponse`, `ErrorResponse`, and of the requests `CreateChatCompletionRequest`,
 * `CreateResponse`, `CreateCompletionRequest`, `CreateEmbeddingRequest`; `x-` extensions removed). OpenAPI 3.1 schemas are JSON
 * Schema 2020-12, so Ajv's 2020 build reads them; `discriminator` is ignored (the `oneOf`/`anyOf` it annotates
 * still applies).
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";

interface SchemaFile {
  source: string;
  schemas: Record<string, object>;
}

const file = JSON.parse(
  readFileSync(new URL("../fixtures/openai-openapi-schemas.json", import.meta.url), "utf8"),
) as SchemaFile;

/**
 * OpenAPI 3.0's `nullable: true`, which Ajv reads only beside a `type`, made to mean what it means: beside a
 * `$ref` (the chunk's `usage`) it becomes `anyOf: [the ref, null]`, and a nullable `enum` lists null.
 */
function nullableRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableRefs);
  if (node === null || typeof node !== "object") return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) out[key] = nullableRefs(value);
  if (nullable === true && "$ref" in out && !("type" in out)) {
    const { $ref, ...others } = out;
    return { ...others, anyOf: [{ $ref }, { type: "null" }] };
  }
  // `enum` lists the allowed values: a nullable one allows null too (e.g. a chunk's `finish_reason`).
  if (nullable === true && Array.isArray(out.enum) && !out.enum.includes(null))
    out.enum = [...out.enum, null];
  return nullable === undefined ? out : { ...out, nullable };
}

let ajv: Ajv2020 | undefined;

function validator(): Ajv2020 {
  if (ajv !== undefined) return ajv;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  // One document whose refs (`#/components/schemas/X`) resolve inside it.
  ajv.addSchema({ $id: "openai", components: { schemas: nullableRefs(file.schemas) } });
  return ajv;
}

/** The names of the schemas the fixture holds. */
export const openAISchemaNames = (): string[] => Object.keys(file.schemas);

/**
 * Validates `value` against OpenAI's component schema `name` (e.g. `CreateEmbeddingResponse`,
 * `ResponseStreamEvent`). Returns the errors as readable lines, empty when valid.
 * @throws Error when the fixture has no schema of that name.
 */
export function openAISchemaErrors(name: string, value: unknown): string[] {
  if (!(name in file.schemas)) throw new Error(`no OpenAI schema named ${name} in the fixture`);
  const validate = validator().getSchema(`openai#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`schema ${name} did not compile`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
  );
}

/**
 * OpenAI's component schema `name` as the fixture holds it (refs `#/components/schemas/X` unresolved; see
 * {@link resolveOpenAIRef}).
 * @throws Error when the fixture has no schema of that name.
 */
export function openAISchema(name: string): Record<string, unknown> {
  const schema = file.schemas[name];
  if (schema === undefined) throw new Error(`no OpenAI schema named ${name} in the fixture`);
  return schema as Record<string, unknown>;
}

/**
 * The schema a `#/components/schemas/X` ref names.
 * @throws Error when the fixture has no such schema.
 */
export const resolveOpenAIRef = (ref: string): Record<string, unknown> =>
  openAISchema(ref.slice(ref.lastIndexOf("/") + 1));
