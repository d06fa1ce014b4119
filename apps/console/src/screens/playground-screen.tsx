/** PLACEHOLDER: replaced by the screen's implementation. */
export function PlaygroundScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Pick a prompt, fill its inputs and run it.</h1>
    </section>
  );
}
