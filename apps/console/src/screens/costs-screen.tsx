/** PLACEHOLDER: replaced by the screen's implementation. */
export function CostsScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Costs.</h1>
    </section>
  );
}
