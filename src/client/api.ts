/**
 * The API's routes as `hc<Api>` types them (src/api/app.ts). A type-only import: none of the server's code is
 * loaded by the client.
 */
import type { hc } from 'hono/client';
import type { Api } from '../api/app.ts';

export type ApiClient = ReturnType<typeof hc<Api>>;

/*
 * The answers the client declares (types.ts: the server's own types) against what hc<Api> infers from the routes'
 * zod schemas: if the schemas and the service's types drift apart, this file stops compiling.
 */
import type { InferResponseType } from 'hono/client';
import type { Chain, NewTransfer, PublicTransferView, Quote, ReissuedStatusToken, Token, TransferPage, TransferView } from './types.ts';

type DataOf<R> = R extends { success: true; data: infer D } ? D : never;
type Routes = ApiClient['api'];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Fits<A, B> = [A] extends [B] ? true : false;
type Expect<T extends true> = T;

export type AnswerTypesMatchTheSchemas = [
  Expect<Same<DataOf<InferResponseType<Routes['private-route']['quote']['$post'], 200>>, Quote>>,
  Expect<Same<DataOf<InferResponseType<Routes['private-route']['$post'], 200>>, NewTransfer>>,
  Expect<Same<DataOf<InferResponseType<Routes['private-route'][':routeId']['$get'], 200>>, TransferView | PublicTransferView>>,
  Expect<Same<DataOf<InferResponseType<Routes['private-route']['$get'], 200>>, TransferPage>>,
  Expect<Same<DataOf<InferResponseType<Routes['private-route'][':routeId']['status-token']['$post'], 200>>, ReissuedStatusToken>>,
  Expect<Same<DataOf<InferResponseType<Routes['bridge']['chains']['$get'], 200>>, Chain[]>>,
  // The schema types a token's address as a string; the service's type says 0x-prefixed.
  Expect<Fits<Token[], DataOf<InferResponseType<Routes['bridge']['tokens']['$get'], 200>>>>,
];
