import type { Citation, PromptRun, RunRetrieval } from "@promptrun/contract";
import { ScrollRegion } from "../components/scroll-region.tsx";

function SearchView({ search, index }: { search: RunRetrieval; index: number }) {
  const caption = `Search ${index + 1}: ${search.knowledgeBase}`;
  return (
    <ScrollRegion label={caption}>
      <table>
        <caption>
          <code>{search.knowledgeBase}</code> for “{search.query}”
        </caption>
        <thead>
          <tr>
            <th scope="col">n</th>
            <th scope="col">Document</th>
            <th scope="col">Score</th>
          </tr>
        </thead>
        <tbody>
          {search.chunks.length === 0 ? (
            <tr>
              <td colSpan={3} className="muted">
                Nothing found.
              </td>
            </tr>
          ) : (
            search.chunks.map((chunk) => (
              <tr key={chunk.n}>
                <td>[{chunk.n}]</td>
                <td>{chunk.filename}</td>
                <td>{chunk.score.toPrecision(3)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function CitationView({ citation }: { citation: Citation }) {
  return (
    <li>
      <p>
        <strong>[{citation.n}]</strong> {citation.filename}
      </p>
      <blockquote className="citation-quote">{citation.quote}</blockquote>
    </li>
  );
}

/** What a run found in knowledge bases and which of it the answer cites (docs/KNOWLEDGE.md). */
export function RunSources({ run }: { run: PromptRun }) {
  return (
    <>
      {run.retrieval.map((search, index) => (
        <SearchView key={`${search.knowledgeBase}-${index}`} search={search} index={index} />
      ))}
      <h3>Citations</h3>
      {run.citations.length === 0 ? (
        <p className="muted">
          {run.status === "pending"
            ? "Citations are read from the answer when the run completes."
            : "The answer cites none of them."}
        </p>
      ) : (
        <ol className="citations" aria-label="Citations">
          {run.citations.map((citation) => (
            <CitationView key={citation.n} citation={citation} />
          ))}
        </ol>
      )}
    </>
  );
}
