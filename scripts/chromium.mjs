// Headless Chromium for the scripts that photograph fleetsim's pages (the docs' pictures, the
// scripted hour): Debian's /usr/bin/chromium or the browser CHROMIUM_PATH names, driven by
// puppeteer-core as the tests drive it.
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

/** Opens a headless Chromium with one page of the given width; close the browser when done. */
export async function openPage(width = 1400) {
  const chromium = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
  if (!chromium) throw new Error('no Chromium found: apt-get install chromium, or set CHROMIUM_PATH');
  // Root in a container has no user namespaces for Chromium's sandbox.
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage();
  await page.setViewport({ width, height: 1000 });
  return { browser, page };
}

/** The page as a PNG at `path`: all of it, or its first `height` pixels. */
export async function photograph(page, path, height) {
  if (height) await page.setViewport({ ...page.viewport(), height });
  await page.screenshot({ path, fullPage: !height });
  console.log(`wrote ${path}`);
}
