/** PLACEHOLDER: replaced by the screen's implementation. */
export function EnvironmentsScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Environments and API keys.</h1>
    </section>
  );
}
