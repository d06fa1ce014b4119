import type { PushResult } from "@promptrun/contract";

/** What a save did: a new version, or none (the newest version already had this content). */
export function SavedNotice({ saved }: { saved: PushResult }) {
  return (
    <p className="notice notice-ok" role="status">
      {saved.created
        ? `Saved as version ${saved.version} of ${saved.slug}.`
        : `No change: version ${saved.version} of ${saved.slug} already has this content.`}
    </p>
  );
}
