export { nestedDeeperThan } from './depth';
export { missingBody, noFieldsBody, noFieldsProblem } from './no-fields';
export { jsonShapeIssue, type ShapeIssue, type ShapeLimits, type WideObject } from './shape';
export { type TextIssue, toWellFormedText, type WellFormedResult, wellFormedJson } from './text';
export { textProblem } from './text-problem';
