export { nestedDeeperThan } from './depth';
export { type WideObject, widerThan } from './members';
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
