/**
 * `npm run signer:audit -- verify <file>`: checks the signer's audit log (src/signer/policy/auditLog.ts) from its first
 * line: every line parses, counts on, names the hash of the line before it and carries its own. Prints the entries,
 * the refusals by rule, and exits 1 at the first line that was changed, dropped or moved.
 */
import { readFile } from 'node:fs/promises';
import { verifyAuditLines, type AuditRecord } from '../src/signer/policy/auditLog.ts';

const [command, file] = process.argv.slice(2);
if (command !== 'verify' || !file) {
  console.error('usage: npm run signer:audit -- verify <SIGNER_AUDIT_LOG file>');
  process.exit(2);
}
const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
const check = verifyAuditLines(lines);
if (!check.ok) {
  console.error(`${file}: the chain breaks: ${check.problem}`);
  process.exit(1);
}
const records = lines.map((line) => JSON.parse(line) as AuditRecord);
const refusals = new Map<string, number>();
for (const r of records) if (r.verdict === 'refused') refusals.set(r.rule ?? '?', (refusals.get(r.rule ?? '?') ?? 0) + 1);
console.log(`${file}: ${records.length} entries, the chain is whole (last ${records.at(-1)?.at ?? 'none'})`);
console.log(
  `signed ${records.filter((r) => r.verdict === 'signed').length}, note secrets answered ${records.filter((r) => r.verdict === 'answered').length}, refused ${records.filter((r) => r.verdict === 'refused').length}`,
);
for (const [rule, count] of [...refusals].sort((a, b) => b[1] - a[1])) console.log(`  refused by ${rule}: ${count}`);
