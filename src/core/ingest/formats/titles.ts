/** Document titles: the file's base name unless the format names the document itself. */

export function titleFromPath(file: string): string {
  const slash = file.lastIndexOf('/');
  return slash < 0 ? file : file.slice(slash + 1);
}
