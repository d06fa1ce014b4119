/** PLACEHOLDER: replaced by the screen's implementation. */
export function PromptDetailScreen() {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">A prompt's versions.</h1>
    </section>
  );
}
