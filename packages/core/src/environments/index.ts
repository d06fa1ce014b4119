export { createEnvironmentService } from "./environment-service.ts";
