/**
 * PII entity names the policy may name: Presidio's predefined recognizers' entities (microsoft/presidio,
 * docs/supported_entities.md), plus `API_KEY`, the name the gateway's built-in recognizers give API-key-like
 * secrets (`sk-…`, `AKIA…`, `ghp_…`, JWTs), which Presidio has no predefined entity for.
 */

/** The built-in recognizers' name for API-key-like secrets. */
export const SECRET_ENTITY = "API_KEY";

/** Every entity name accepted in `entities` and `score_threshold` (besides `ALL`). */
export const KNOWN_ENTITIES: ReadonlySet<string> = new Set([
  // Global
  "CREDIT_CARD",
  "CRYPTO",
  "DATE_TIME",
  "EMAIL_ADDRESS",
  "IBAN_CODE",
  "IP_ADDRESS",
  "MAC_ADDRESS",
  "NRP",
  "LOCATION",
  "PERSON",
  "PHONE_NUMBER",
  "MEDICAL_LICENSE",
  "URL",
  // USA
  "US_BANK_NUMBER",
  "US_DRIVER_LICENSE",
  "US_ITIN",
  "US_MBI",
  "US_PASSPORT",
  "US_SSN",
  // UK
  "UK_NHS",
  "UK_NINO",
  // Spain, Italy, Poland, Finland, Sweden
  "ES_NIF",
  "ES_NIE",
  "IT_FISCAL_CODE",
  "IT_DRIVER_LICENSE",
  "IT_VAT_CODE",
  "IT_PASSPORT",
  "IT_IDENTITY_CARD",
  "PL_PESEL",
  "FI_PERSONAL_IDENTITY_CODE",
  "SE_PERSONNUMMER",
  // Singapore, Australia, India, Korea, Thailand
  "SG_NRIC_FIN",
  "SG_UEN",
  "AU_ABN",
  "AU_ACN",
  "AU_TFN",
  "AU_MEDICARE",
  "IN_PAN",
  "IN_AADHAAR",
  "IN_VEHICLE_REGISTRATION",
  "IN_VOTER",
  "IN_PASSPORT",
  "IN_GSTIN",
  "KR_RRN",
  "TH_TNIN",
  SECRET_ENTITY,
]);

/** The key of `score_threshold` that applies to every entity without its own threshold. */
export const ALL_ENTITIES = "ALL";
