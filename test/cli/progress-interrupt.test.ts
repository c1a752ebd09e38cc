import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { startProgress } from "../../src/cli/progress.js";
import { ManualClock } from "../../src/core/clock.js";
import type { Store } from "../../src/ledger/store.js";

/** A terminal: everything written to it, in order, escape sequences included. */
class FakeTty extends Writable {
  text = "";
  isTTY = true;
  columns = 120;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

const counts = { new: 3, running: 1, suspended: 0, done: 2, failed: 0, dead: 0 };
const store = { countTasks: async () => counts } as unknown as Store;

describe("Ctrl-C while the progress bar is drawn", () => {
  it("clears the bar, then says it was interrupted; nothing is drawn over that line or the report after it", async () => {
    const tty = new FakeTty();
    const clock = new ManualClock();
    const view = startProgress({ mode: "bar", store, jobId: "j", total: 6, clock, stream: tty });
    await clock.advance(250); // one refresh: the bar shows 2/6
    const said = view.say("interrupted: handing work back; resume with segops resume j");
    await clock.advance(250); // the refresh loop sees it is stopped
    await said;
    const at = tty.text.indexOf("interrupted:");
    expect(at).toBeGreaterThan(0);
    const before = tty.text.slice(0, at);
    expect(before).toContain("2/6 done");
    // The bar's line is erased (ESC [2K) after its last frame and before the message.
    expect(before.lastIndexOf("\x1b[2K")).toBeGreaterThan(before.lastIndexOf("2/6 done"));
    // Nothing after the message: no frame, no cursor move that would put the report over it.
    await view.stop();
    await clock.advance(1000);
    expect(tty.text.slice(at)).toBe("interrupted: handing work back; resume with segops resume j\n");
  });
});
