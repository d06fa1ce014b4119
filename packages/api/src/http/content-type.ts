/** True for `application/json` with any parameters (charset…), case-insensitive; false when missing. */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const mediaType = header.split(";", 1)[0] ?? "";
  return mediaType.trim().toLowerCase() === "application/json";
}
