import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/**
 * Domain code is pure: what a `domain/` folder loads at run time (directly, or through a package's index) must not
 * reach I/O (NATS, Postgres, gRPC, HTTP, the file system, Chromium, the LLM), and it names no outside module's types
 * but these either (a port says what it needs in its own words, not as a `Socket`). Only these outside modules may
 * be imported; the project's own packages are followed into where they are loaded, not where only their types are.
 */
const PURE_MODULES = new Set([
  "zod",
  "decimal.js",
  "ajv",
  "ajv-formats",
  "ajv/dist/2020",
  "node:crypto",
  "node:util",
  "node:path",
  "node:url",
]);

/** Where each of the project's packages (`@bas/...`) lives, and what its entry points are. */
function workspacePackages(root: string): Map<string, { dir: string; exports: Record<string, string> }> {
  const packages = new Map<string, { dir: string; exports: Record<string, string> }>();
  for (const group of ["packages", "services", "proto"]) {
    const dirs =
      group === "proto" ? [join(root, "proto")] : readdirSync(join(root, group)).map((d) => join(root, group, d));
    for (const dir of dirs) {
      const manifest = join(dir, "package.json");
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { name: string; main?: string; exports?: unknown };
      const exports: Record<string, string> =
        typeof pkg.exports === "object" && pkg.exports ? (pkg.exports as Record<string, string>) : {};
      if (!exports["."] && pkg.main) exports["."] = `./${pkg.main}`;
      packages.set(pkg.name, { dir, exports });
    }
  }
  return packages;
}

/** The modules a file imports or re-exports, and whether it loads them when it runs (not type-only). */
function imports(file: string): Array<{ specifier: string; loaded: boolean }> {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
  const found: Array<{ specifier: string; loaded: boolean }> = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          clause.namedBindings &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly));
      found.push({ specifier: (statement.moduleSpecifier as ts.StringLiteral).text, loaded: !typeOnly });
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
      found.push({ specifier: (statement.moduleSpecifier as ts.StringLiteral).text, loaded: !statement.isTypeOnly });
    }
  }
  return found;
}

function resolveFile(base: string): string | undefined {
  for (const candidate of [base, `${base}.ts`, `${base}.js`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

function domainFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string, inDomain: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, inDomain || entry.name === "domain");
      // Tests and test helpers beside the domain code may load what they like.
      else if (inDomain && entry.name.endsWith(".ts") && !/\.test\.ts$|-spec\.ts$/.test(entry.name)) files.push(path);
    }
  };
  for (const group of ["packages", "services"]) if (existsSync(join(root, group))) walk(join(root, group), false);
  return files;
}

/**
 * For each domain file that loads a module outside `PURE_MODULES`, the first chain by which it does, as
 * "services/x/src/domain/a.ts → @bas/service-kit → …/grpc-handler.ts → @grpc/grpc-js". Empty when the domain is pure.
 */
export function findDomainIo(root: string): string[] {
  root = resolve(root);
  const packages = workspacePackages(root);
  const problems: string[] = [];
  const pureFiles = new Set<string>();

  function visit(file: string, chain: string[], seen: Set<string>): void {
    if (pureFiles.has(file) || seen.has(file)) return;
    seen.add(file);
    const before = problems.length;
    for (const { specifier, loaded } of imports(file)) {
      let target: string | undefined;
      if (specifier.startsWith(".")) {
        if (!loaded) continue;
        target = resolveFile(resolve(dirname(file), specifier));
      } else {
        const name = specifier
          .split("/")
          .slice(0, specifier.startsWith("@") ? 2 : 1)
          .join("/");
        const pkg = packages.get(name);
        if (!pkg) {
          if (!PURE_MODULES.has(specifier))
            problems.push([...chain, loaded ? specifier : `${specifier} (types)`].join(" → "));
          continue;
        }
        if (!loaded) continue;
        const entry = pkg.exports[`.${specifier.slice(name.length)}`];
        target = entry ? resolveFile(join(pkg.dir, entry)) : undefined;
      }
      if (!target) problems.push([...chain, `${specifier} (not found)`].join(" → "));
      else visit(target, [...chain, specifier.startsWith(".") ? relative(root, target) : specifier], seen);
    }
    if (problems.length === before) pureFiles.add(file);
  }

  // One chain per domain file is enough to say what to fix.
  const firstPerFile: string[] = [];
  for (const file of domainFiles(root)) {
    const before = problems.length;
    visit(file, [relative(root, file)], new Set());
    if (problems.length > before) firstPerFile.push(problems[before]);
  }
  return firstPerFile;
}

if (require.main === module) {
  const problems = findDomainIo(process.argv[2] ?? resolve(__dirname, ".."));
  if (problems.length > 0) {
    console.error(`domain code loads I/O (allowed outside modules: ${[...PURE_MODULES].join(", ")}):`);
    for (const problem of problems) console.error(`  ${problem}`);
    process.exit(1);
  }
  console.log("domain folders load no I/O.");
}
