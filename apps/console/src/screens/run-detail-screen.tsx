/** PLACEHOLDER: replaced by the screen's implementation. */
export function RunDetailScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">A run.</h1>
    </section>
  );
}
