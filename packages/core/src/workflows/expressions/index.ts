export { type CompiledExpression, compileExpression, type ExpressionContext } from "./expression.ts";
export {
  asText,
  type CompiledTemplate,
  type CompiledValue,
  compileTemplate,
  compileValue,
} from "./template.ts";
