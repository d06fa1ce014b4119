/** PLACEHOLDER: replaced by the screen's implementation. */
export function RunsScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Runs.</h1>
    </section>
  );
}
