/** PLACEHOLDER: replaced by the screen's implementation. */
export function ThreadScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">A thread.</h1>
    </section>
  );
}
