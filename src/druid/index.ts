export {
  type ClassifyOptions,
  classify,
  classifyFailure,
  classifyResponse,
  type HttpResponseLike,
  type ParsedErrorBody,
  parseErrorBody,
  parseRetryAfter,
} from "./classify.js";
export {
  type CallOptions,
  type DatasourceLoadStatusOptions,
  DruidClient,
  type DruidClientOptions,
  SAMPLE_MARGIN_MS,
  type SampleOptions,
  type SqlOptions,
  type SqlResult,
  type SqlRowsByFormat,
  type SubmitResult,
  type TaskSpec,
} from "./client.js";
export {
  BadRequestError,
  CapacityError,
  DruidError,
  type DruidErrorCode,
  type DruidErrorInit,
  DuplicateTaskError,
  ForbiddenError,
  isDruidError,
  NotFoundError,
  SpecRejectedError,
  TlsError,
  TransientError,
  UnauthorizedError,
  UnavailableError,
  UnexpectedResponseError,
  UnsupportedError,
} from "./errors.js";
export {
  type DruidAuth,
  type DruidClientLogger,
  DruidHttp,
  type DruidHttpOptions,
  type DruidRequest,
  type DruidResponse,
  type DruidService,
  type DruidTlsOptions,
} from "./http.js";
export { isHandedOff, parseSegmentLoadRow, segmentLoadQuery } from "./sql.js";
export * from "./types.js";
