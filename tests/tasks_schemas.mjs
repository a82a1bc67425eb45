// Checks MCP Tasks messages against the extension's own schemas
// (@modelcontextprotocol/ext-tasks, core/v2): reads [[schemaName, message], ...] as JSON
// on stdin, prints each problem, exits 1 when there is one. Run by tests/test_tasks.py.
import * as v2 from "@modelcontextprotocol/ext-tasks/core/v2";
import { readFileSync } from "node:fs";

let problems = 0;
for (const [schema, message] of JSON.parse(readFileSync(0, "utf8"))) {
  const parsed = v2[schema].safeParse(message);
  if (!parsed.success) {
    problems += 1;
    console.log(`${schema}: ${JSON.stringify(parsed.error.issues)} in ${JSON.stringify(message)}`);
  }
}
process.exit(problems ? 1 : 0);
