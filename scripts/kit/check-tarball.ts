/**
 * What a published kit tarball must not contain: TypeScript source that needs compiling (only
 * .d.ts), test files, or `workspace:` / `catalog:` versions in its package.json.
 */
export async function checkTarball(tarball: string): Promise<void> {
  const listing = Bun.spawnSync(["tar", "-tzf", tarball], { stdout: "pipe", stderr: "pipe" });
  if (listing.exitCode !== 0) throw new Error(`cannot list ${tarball}: ${listing.stderr.toString()}`);
  const problems: string[] = [];
  for (const path of listing.stdout.toString().split("\n").filter(Boolean)) {
    if (/\.(c|m)?tsx?$/.test(path) && !/\.d\.(c|m)?ts$/.test(path))
      problems.push(`TypeScript source: ${path}`);
    if (/(\.|-)(test|spec)\.|__tests__|test-support/.test(path)) problems.push(`test file: ${path}`);
  }
  const manifest = Bun.spawnSync(["tar", "-xzOf", tarball, "package/package.json"], { stdout: "pipe" });
  const text = manifest.stdout.toString();
  for (const protocol of ["workspace:", "catalog:"]) {
    if (text.includes(`"${protocol}`)) problems.push(`package.json has a ${protocol} version`);
  }
  if (problems.length > 0) throw new Error(`${tarball}:\n  ${problems.join("\n  ")}`);
}
