/** PLACEHOLDER: replaced by the screen's implementation. */
export function WebhooksScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Webhooks.</h1>
    </section>
  );
}
