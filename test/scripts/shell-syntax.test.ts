import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Every shell script of the repository parses (`bash -n`): the test command, CI and the integrations'
 * scripts run only on a whole run, so a quote broken in one of them (an apostrophe in a `node -e` script's
 * comment once ended every run in a syntax error after all its stages had passed) is caught here at once.
 */
describe("shell scripts", () => {
  const scripts = execFileSync("git", ["ls-files", "*.sh", ".ci/run"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter(Boolean);

  it("are found", () => {
    expect(scripts).toContain("scripts/test.sh");
    expect(scripts).toContain(".ci/run");
  });

  it.each(scripts)("%s parses", (script) => {
    const r = spawnSync("bash", ["-n", script], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
