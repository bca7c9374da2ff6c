export { nestedDeeperThan } from './depth';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
