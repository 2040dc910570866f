/**
 * Headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core: no browser download.
 * The flags are the ones that work on this machine's closed network.
 */
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';

/** Where Chromium is, or undefined when it is not installed. */
export function chromiumPath(): string | undefined {
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) if (existsSync(p)) return p;
  return undefined;
}

/** Launches Chromium headless. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A fresh page of `width`×`height` that fails the test on any page error. */
export async function openPage(browser: Browser, url: string, width = 1200, height = 800): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  return { page, errors };
}
