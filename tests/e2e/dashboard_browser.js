// Drives the web dashboard of a running weir-runtime in headless Chromium (Playwright),
// for tests/e2e/dashboard.sh:
//   node dashboard_browser.js <base url> <job id> <savepoint dir> <screenshot dir>
// Checks, in order: the job list, a deep link to the job page (weir's and Flink's form),
// the graph with parallelism, records and backpressure, checkpoints with plotted points,
// the savepoint button (asks first; a dismissed question does nothing), stop with
// savepoint; and that the browser logged no console error. Prints one line per step;
// exits 1 with the failed step's message.
"use strict";

const {chromium} = require("playwright-core");

const [base, jobId, savepointDir, shots] = process.argv.slice(2);
const browserPath = process.env.WEIR_CHROMIUM || "/usr/bin/chromium";
const consoleErrors = [];

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function step(name, body) {
  const t0 = Date.now();
  await body();
  console.log(`ok - ${name} (${Date.now() - t0} ms)`);
}

async function main() {
  const browser = await chromium.launch({executablePath: browserPath, args: ["--no-sandbox"]});
  try {
    const page = await browser.newPage({viewport: {width: 1400, height: 1100}});
    page.on("console", (msg) => {
      if (msg.type() === "error") consoleErrors.push(msg.text());
    });
    page.on("pageerror", (err) => consoleErrors.push("uncaught: " + err.message));
    page.setDefaultTimeout(20000);

    await step("the job list at / shows the running job", async () => {
      await page.goto(base + "/");
      const row = page.locator(`tr.job-row[data-job-id="${jobId}"]`);
      await row.waitFor();
      const text = await row.innerText();
      check(text.includes("RUNNING"), `the job's row does not say RUNNING: ${text}`);
      await page.screenshot({path: `${shots}/jobs.png`, fullPage: true});
    });

    await step("a click on the job opens its page", async () => {
      await page.locator(`tr.job-row[data-job-id="${jobId}"] a`).click();
      await page.waitForURL(`**/#/jobs/${jobId}`);
      await page.locator("#job-state", {hasText: "RUNNING"}).waitFor();
    });

    await step("the deep link /#/jobs/<id> shows the graph with parallelism and records", async () => {
      await page.goto(`${base}/#/jobs/${jobId}`);
      await page.reload();
      await page.locator("#job-state", {hasText: "RUNNING"}).waitFor();
      const vertices = page.locator("#graph svg g.vertex");
      await vertices.first().waitFor();
      check(await vertices.count() >= 2, "the graph has fewer than 2 vertices");
      check(await page.locator("#graph svg path.edge").count() >= 1, "the graph has no edge");
      const first = await vertices.first().textContent();
      check(/Parallelism \d+/.test(first), `no parallelism in the vertex: ${first}`);
      check(/Backpressure (ok|low|high) \(\d+ %\)/.test(first), `no backpressure: ${first}`);
      // Records flow: the source's "Out" count grows past 0.
      await page.waitForFunction(() => {
        const cells = document.querySelectorAll("#vertices-table tbody tr.vertex-row td");
        return cells.length > 4 && Number(cells[4].textContent.replace(/\D/g, "")) > 0;
      });
    });

    await step("Flink's deep link /#/job/running/<id>/overview leads to the same page", async () => {
      await page.goto(`${base}/#/job/running/${jobId}/overview`);
      await page.reload();
      await page.locator("#job-state", {hasText: "RUNNING"}).waitFor();
    });

    await step("the checkpoint history has completed checkpoints and the plot has points", async () => {
      await page.waitForFunction(
          () => document.querySelectorAll("#checkpoint-plot circle.point.duration").length >= 2);
      check(await page.locator("#checkpoint-plot circle.point.size").count() >= 2,
            "the size series has fewer than 2 points");
      const rows = await page.locator("#checkpoint-history tr.checkpoint-row").count();
      check(rows >= 2, `the history has ${rows} rows`);
      const restore = await page.locator("#latest-restore").innerText();
      check(restore.includes("Latest restore"), `no latest restore line: ${restore}`);
      await page.screenshot({path: `${shots}/job.png`, fullPage: true});
    });

    await step("a dismissed question does not cancel the job", async () => {
      let asked = "";
      page.once("dialog", (d) => { asked = d.message(); d.dismiss(); });
      await page.locator("#btn-cancel").click();
      check(asked.includes("Cancel job"), `the cancel button did not ask first: '${asked}'`);
      await page.waitForTimeout(500);
      const state = await (await fetch(`${base}/jobs/${jobId}/status`)).json();
      check(state.status === "RUNNING", `the job is ${state.status} after a dismissed cancel`);
    });

    await step("the savepoint button asks, then triggers a savepoint shown in the history", async () => {
      await page.locator("#savepoint-dir").fill(savepointDir);
      let asked = "";
      page.once("dialog", (d) => { asked = d.message(); d.accept(); });
      await page.locator("#btn-savepoint").click();
      check(asked.includes("Trigger a savepoint") && asked.includes(savepointDir),
            `the savepoint button did not ask first: '${asked}'`);
      await page.locator("#message.ok", {hasText: "Savepoint completed"}).waitFor();
      const message = await page.locator("#message").innerText();
      check(message.includes(savepointDir), `the message names no savepoint path: ${message}`);
      await page.locator("#checkpoint-history tr.checkpoint-row", {hasText: "SAVEPOINT"}).first()
          .waitFor();
      await page.screenshot({path: `${shots}/savepoint.png`, fullPage: true});
    });

    await step("stop with savepoint asks, stops the job and disables the buttons", async () => {
      let asked = "";
      page.once("dialog", (d) => { asked = d.message(); d.accept(); });
      await page.locator("#btn-stop").click();
      check(asked.includes("Stop job"), `the stop button did not ask first: '${asked}'`);
      await page.locator("#message.ok", {hasText: "job stopped"}).waitFor();
      await page.locator("#job-state", {hasText: "FINISHED"}).waitFor();
      check(await page.locator("#btn-savepoint").isDisabled(), "the savepoint button is enabled");
      await page.screenshot({path: `${shots}/stopped.png`, fullPage: true});
    });

    await step("the browser logged no console error", async () => {
      check(consoleErrors.length === 0, "console errors:\n  " + consoleErrors.join("\n  "));
    });
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.log("not ok - " + err.message);
  if (consoleErrors.length) console.log("console errors:\n  " + consoleErrors.join("\n  "));
  process.exit(1);
});
