// Fails when a comment or a doc names a repository path that does not exist, such as one naming a file that has since moved.
// scripts/check-layout.sh runs it. Plain Node (no tsx) so it stays fast.
//
// What it reads: the comments of the code files under the folders below, and the whole text of README.md and docs/*.md.
// What counts as a path: a token that starts with one of the top-level folders (src/, test/, docs/, …) and is not part
// of a longer path (`../src/x`, `node_modules/x/src/y` and URLs are skipped). Globs (`test/e2e/*.test.ts`),
// placeholders (`docs/<name>.md`, `src/${x}`) and elisions (`test/...`) are skipped too.
// A path exists when it is a file or a folder, or when it is a module specifier whose `.js` stands for `.ts`, or an
// extension-less module name (`src/chain/txSender`). A path of another repository is written after that repository's
// name, which the check skips: `circlefin/evm-cctp-contracts/src/v2/FinalityThresholds.sol`.
// The relative links of the docs (`[runbook](operations.md)`) are checked too, except those that leave the repository.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const TOP_LEVEL = ['src', 'workflows', 'activities', 'devnet', 'scripts', 'bench', 'test', 'bin', 'docs', 'native', 'drizzle'];
const SCANNED = ['src', 'workflows', 'activities', 'devnet', 'scripts', 'bench', 'test', 'bin', 'docs', 'README.md'];
const CODE = /\.(ts|mts|cts|mjs|cjs|js|sol|css)$/;
const SHELL = /\.sh$/;
const DOC = /\.md$/;

// A path token: a top-level folder, a slash, then path characters (a trailing full stop is dropped below).
const PATH = new RegExp(`(?<![\\w./@~-])(?:${TOP_LEVEL.join('|')})/(?:[\\w.-]+/?)*`, 'g');
// A Markdown link's target, up to an anchor or the closing parenthesis.
const LINK = /\]\(([^)#\s]+)/g;

/** Whether `path` names something in the working tree (see the header for the forms accepted). */
function exists(path) {
  if (existsSync(path)) return true;
  if (path.endsWith('.js') && existsSync(`${path.slice(0, -3)}.ts`)) return true;
  return ['.ts', '.mjs', '.js', '.json'].some((ext) => existsSync(path + ext));
}

/**
 * The comment text of each line of a C-like source file (`//` and `/* … *\/`); '' for lines without a comment. Strings
 * are skipped so that `'http://…'` does not open a comment; regular expression literals are rare enough to ignore.
 */
function cLikeComments(text) {
  const lines = text.split('\n');
  const out = lines.map(() => '');
  let inBlock = false;
  lines.forEach((line, n) => {
    let quote = null;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (inBlock) {
        if (c === '*' && line[i + 1] === '/') {
          inBlock = false;
          i++;
        } else out[n] += c;
      } else if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = null;
      } else if (c === '/' && line[i + 1] === '/') {
        out[n] += line.slice(i + 2);
        break;
      } else if (c === '/' && line[i + 1] === '*') {
        inBlock = true;
        i++;
      } else if (c === "'" || c === '"' || c === '`') quote = c;
    }
  });
  return out;
}

/** The comment text of each line of a shell script: what follows a `#` that starts a word. */
function shellComments(text) {
  return text.split('\n').map((line) => {
    const match = /(?:^|\s)#(?!!)(.*)$/.exec(line);
    return match ? match[1] : '';
  });
}

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...SCANNED], { encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && !file.includes('node_modules/') && existsSync(file));

const problems = [];
for (const file of files) {
  let lines;
  if (DOC.test(file)) lines = readFileSync(file, 'utf8').split('\n');
  else if (CODE.test(file)) lines = cLikeComments(readFileSync(file, 'utf8'));
  else if (SHELL.test(file)) lines = shellComments(readFileSync(file, 'utf8'));
  else continue;
  lines.forEach((line, n) => {
    for (const match of line.matchAll(PATH)) {
      const path = match[0].replace(/\.+$/, '');
      const next = line[match.index + match[0].length] ?? '';
      if (/[*<{$[]/.test(next) || path.includes('...') || path.includes('…')) continue;
      if (!exists(path)) problems.push(`${file}:${n + 1}: ${path}`);
    }
    if (!DOC.test(file)) return;
    for (const [, target] of line.matchAll(LINK)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const path = normalize(join(dirname(file), target));
      if (!path.startsWith('..') && !existsSync(path)) problems.push(`${file}:${n + 1}: ${target} (a link)`);
    }
  });
}

if (problems.length > 0) {
  console.error(`${problems.length} comment(s) or doc line(s) name a path that does not exist; point them at the right path or drop the reference:`);
  for (const problem of problems) console.error(`  ${problem}`);
  process.exit(1);
}
console.log(`comments and docs name no missing paths (${files.length} files read)`);
