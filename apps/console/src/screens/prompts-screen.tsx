/** PLACEHOLDER: replaced by the screen's implementation. */
export function PromptsScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Your prompts.</h1>
    </section>
  );
}
