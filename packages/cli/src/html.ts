/** Helpers for the self-contained HTML pages (graph, report): no network, everything inline. */

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** JSON safe to embed inside `<script>`: `<`, U+2028 and U+2029 escaped. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** A complete page: one `<style>`, the body, the data as JSON, one `<script>`. */
export function htmlPage(options: { title: string; css: string; body: string; data: unknown; script: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style>${options.css}</style>
</head>
<body>
${options.body}
<script id="cairn-data" type="application/json">${embedJson(options.data)}</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById('cairn-data').textContent);
${options.script}
</script>
</body>
</html>
`;
}
