/** The step files' parsers, shared with the filesystem store (`@cairn/runner/store`). */
export { parseHolder, parseJobRecord, parseRecord } from '@cairn/runner/store';
