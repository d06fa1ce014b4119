import {
  type Page,
  pageOf,
  type SetTagRequest,
  type TagHistoryEntry,
  type TagMove,
  tagHistoryEntrySchema,
  tagMoveSchema,
} from "@promptrun/contract";
import { ApiError } from "./api-error.ts";
import { queryString } from "./client-request.ts";
import type { RestRequester } from "./rest-request.ts";

/** Options of the tag calls. */
export interface TagCallOptions {
  signal?: AbortSignal;
}

/** Tag moves (docs/PRODUCT-RULES.md "Prompts over REST"). */
export interface PromptTagCalls {
  /**
   * Points `tag` at `body.version`. With `expectedVersion` the move is a compare-and-set: an
   * ApiError `conflict` (409) when the tag points elsewhere (null: when it exists already).
   */
  setTag(slug: string, tag: string, body: SetTagRequest, options?: TagCallOptions): Promise<TagMove>;
  /** Removes `tag`; an ApiError `not_found` for an unknown slug or tag. */
  deleteTag(slug: string, tag: string, options?: TagCallOptions): Promise<void>;
  /** The tag's moves, newest first (`version` null: a delete); pass `nextCursor` for the next page. */
  tagHistory(
    slug: string,
    tag: string,
    page?: { cursor?: string; limit?: number } & TagCallOptions,
  ): Promise<Page<TagHistoryEntry>>;
}

const tagPath = (slug: string, tag: string) =>
  `/api/v1/prompts/${encodeURIComponent(slug)}/tags/${encodeURIComponent(tag)}`;

/** `PUT` and `DELETE /api/v1/prompts/{slug}/tags/{tag}` over the client's requester. */
export function createPromptTagCalls(requester: RestRequester): PromptTagCalls {
  return {
    setTag: (slug, tag, body, options = {}) =>
      requester.request("PUT", tagPath(slug, tag), tagMoveSchema, { body, signal: options.signal }),
    async deleteTag(slug, tag, options = {}) {
      const response = await requester.send("DELETE", tagPath(slug, tag), { signal: options.signal });
      if (!response.ok) throw await ApiError.fromResponse(response);
    },
    tagHistory: (slug, tag, { cursor, limit, signal } = {}) =>
      requester.request(
        "GET",
        `${tagPath(slug, tag)}/history${queryString({ cursor, limit })}`,
        pageOf(tagHistoryEntrySchema),
        { signal },
      ),
  };
}
