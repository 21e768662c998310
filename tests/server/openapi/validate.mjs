// Validates an OpenAPI document with @seriousme/openapi-schema-validator (pinned by
// package-lock.json).  Usage: node validate.mjs FILE   Exit 0 valid, 1 invalid (errors printed).
import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";

const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
const validator = new Validator();
const res = await validator.validate(doc);
if (!res.valid) {
  console.error(JSON.stringify(res.errors, null, 2));
  process.exit(1);
}
if (validator.version !== "3.1") {
  console.error(`expected an OpenAPI 3.1 document, got ${validator.version}`);
  process.exit(1);
}
console.log(`valid OpenAPI ${validator.version}`);
