/** Scalar reads this configuration; fonts, telemetry and the AI agent would reach the internet. */
const scalarConfiguration = {
  url: "/api/v1/openapi.json",
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
};

const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Promptrun API reference</title>
  </head>
  <body>
    <noscript>The API reference needs JavaScript; the raw document is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</noscript>
    <div id="app"></div>
    <script src="/docs/scalar.js"></script>
    <script>Scalar.createApiReference("#app", ${JSON.stringify(scalarConfiguration)});</script>
  </body>
</html>
`;

/** GET /docs: the human-readable API reference (Scalar, served locally so it works offline). */
export function docsPageResponse(): Response {
  return new Response(html, {
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
  });
}
