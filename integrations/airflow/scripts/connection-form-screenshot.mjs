// Used by connection-form-screenshot.sh, which starts Airflow's api-server and sets URL, OUT and PLAYWRIGHT.
const { chromium } = await import(process.env.PLAYWRIGHT);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(`${process.env.URL}/connections`, { waitUntil: "networkidle" });
  await page.getByRole("button", { name: "Add Connection" }).click();
  await page.locator("input[name=connection_id]").fill("segops_default");
  const type = page.getByRole("combobox");
  await type.click();
  await type.fill("segops");
  await page.getByRole("option", { name: "segops", exact: true }).click();
  // Two pictures side by side in one: the form opens one section at a time (the standard fields, then the
  // extra ones), each waited for by segops' own labels, so the generic form is never saved as this one.
  const shots = [];
  for (const [section, labels] of [
    ["Standard Fields", ["Service URL", "API token"]],
    ["Extra Fields", ["Druid host in asset URIs", "TLS verification"]],
  ]) {
    const label = page.getByText(labels[0], { exact: true });
    if (!(await label.isVisible())) await page.getByText(section, { exact: true }).click();
    for (const l of labels) await page.getByText(l, { exact: true }).waitFor();
    shots.push(await page.locator("[role=dialog]").screenshot());
  }
  const [a, b] = shots.map((png) => `data:image/png;base64,${png.toString("base64")}`);
  const sheet = await browser.newPage({ viewport: { width: 1800, height: 900 } });
  await sheet.setContent(
    `<body style="margin:0;display:flex;gap:16px;align-items:flex-start;background:#fff"><img src="${a}"><img src="${b}"></body>`,
  );
  await sheet.locator("body").screenshot({ path: process.env.OUT });
} finally {
  await browser.close();
}
