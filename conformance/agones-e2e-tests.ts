/**
 * The tests of Agones's `test/e2e` suite, grouped by what they need of the cluster under test, with
 * the outcome expected against fleetsim and why where it is not a pass. `npm run
 * conformance:agones-e2e` reports each outcome against this list. Grouping first read from what
 * each test calls, then corrected by running the suite.
 *
 * - `resource-api`: only the resource API and the controllers' behaviour;
 * - `game-server`: also talks to the game-server process over UDP/TCP (Agones's simple-game-server
 *   commands, answered by fleetsim's simulated simple-game-server);
 * - `pods`: needs real pods, container images or Agones's own deployment (out of fleetsim's scope
 *   where the test depends on a running image; fleetsim projects a pod per GameServer and
 *   simulates its process, which is enough for some);
 * - `allocator-service`: needs Agones's allocator service as installed (its Service in
 *   agones-system, mutual TLS, its Secrets): the harness starts fleetsim with --allocator-tls auto.
 */

export type SuiteGroup = 'resource-api' | 'game-server' | 'pods' | 'allocator-service';

/** What the suite ran against: fleetsim, or a cluster running Agones (the oracle, docs/oracle.md). */
export type Side = 'fleetsim' | 'agones';

export interface Expectation {
  /** The outcome expected (default: pass). */
  expect?: 'pass' | 'fail' | 'skip';
  /** Why the test does not pass, or what it needs beyond the group. */
  because?: string;
}

export interface SuiteTest extends Expectation {
  test: string;
  group: SuiteGroup;
  /** What is expected against real Agones (the oracle), where it is not a pass; a test the suite skips is skipped there too. */
  agones?: Expectation;
}

/** Agones accepts a minimum equal to the buffer (or a maximum equal to it); the spec wants strictly bigger. */
const EQUALITY = 'relies on Agones accepting a FleetAutoscaler bound equal to the buffer; the spec says strictly bigger/smaller, and the spec wins';
const PLAYER_TRACKING = 'skipped by the suite: PlayerTracking is off (alpha)';
/** Against the oracle: its stand-in kubelet runs programs, not images (oracle/images.ts). */
/**
 * Against the oracle: the allocator tests put a certificate of their own in the allocator's TLS
 * Secret and call it once the allocator serves it; a kubelet rewrites a Secret's volume when the
 * Secret changes, the oracle's stand-in writes it once, when the pod starts (oracle/kubelet/volumes.ts).
 */
const ORACLE_SECRET_NOT_REFRESHED = {
  expect: 'fail' as const,
  because: "the oracle's stand-in kubelet writes a Secret volume once, at the pod's start: the allocator keeps serving its first certificate after the test replaces allocator-tls, and the test's client refuses it (bad certificate) until it times out",
};
const ORACLE_NO_IMAGE = { expect: 'fail' as const, because: "the oracle runs no container images, only the programs it maps Agones's own images to (oracle/images.ts): this image is not one, so its GameServer never gets Ready" };
const SIDECAR_CONTAINERS = 'skipped by the suite: SidecarContainers is on (beta, the default)';
const IMAGE_NOT_RUN = 'passes without the image: fleetsim does not run images, it simulates the process, which reports Ready';
const WEBHOOK_POD = 'runs the autoscaler-webhook image as a Pod behind a Service: fleetsim runs no images';
const ALLOCATOR = 'finds the allocator through its Service in agones-system, replaces its server certificate (the Secret allocator-tls) and calls it over mutual TLS';

export const AGONES_E2E_TESTS: readonly SuiteTest[] = [
  // Fleets, sets and GameServers through the resource API.
  { test: 'TestFleetRequestsLimits', group: 'resource-api' },
  { test: 'TestFleetStrategyValidation', group: 'resource-api' },
  { test: 'TestFleetScaleWithDualAllocations', group: 'resource-api' },
  { test: 'TestFleetScaleUpAllocateEditAndScaleDownToZero', group: 'resource-api' },
  { test: 'TestFleetScaleUpEditAndScaleDown', group: 'resource-api' },
  { test: 'TestFleetRollingUpdate', group: 'resource-api' },
  { test: 'TestUpdateFleetReplicaAndSpec', group: 'resource-api' },
  { test: 'TestScaleFleetUpAndDownWithGameServerAllocation', group: 'resource-api' },
  { test: 'TestFleetUpdates', group: 'resource-api' },
  { test: 'TestUpdateGameServerConfigurationInFleet', group: 'resource-api' },
  { test: 'TestReservedGameServerInFleet', group: 'resource-api' },
  { test: 'TestFleetGSSpecValidation', group: 'resource-api' },
  { test: 'TestFleetNameValidation', group: 'resource-api' },
  { test: 'TestGameServerAllocationDuringGameServerDeletion', group: 'resource-api' },
  { test: 'TestCreateFleetAndUpdateScaleSubresource', group: 'resource-api' },
  { test: 'TestScaleUpAndDownInParallelStressTest', group: 'resource-api' },
  { test: 'TestUpdateFleetScheduling', group: 'resource-api' },
  { test: 'TestFleetWithZeroReplicas', group: 'resource-api' },
  { test: 'TestFleetWithLongLabelsAnnotations', group: 'resource-api' },
  { test: 'TestFleetResourceValidation', group: 'resource-api' },
  { test: 'TestFleetAllocationOverflow', group: 'resource-api' },
  { test: 'TestDevelopmentGameServerLifecycle', group: 'resource-api' },
  { test: 'TestGameServerPortPolicyNone', group: 'resource-api' },
  { test: 'TestGameServerWithoutPort', group: 'resource-api' },
  { test: 'TestGameServerResourceValidation', group: 'resource-api' },
  { test: 'TestGameServerPodTemplateSpecFailSchemaValidation', group: 'resource-api', because: 'runs kubectl apply (KUBECONFIG)' },
  { test: 'TestGameServerPatch', group: 'resource-api' },
  { test: 'TestGracefulShutdown', group: 'resource-api', expect: 'skip', because: SIDECAR_CONTAINERS },
  // Allocation.
  { test: 'TestCreateFleetAndGameServerAllocate', group: 'resource-api' },
  { test: 'TestCreateFleetAndGameServerStateFilterAllocation', group: 'resource-api' },
  { test: 'TestCreateFleetAndGameServerPlayerCapacityAllocation', group: 'resource-api', expect: 'skip', because: PLAYER_TRACKING },
  { test: 'TestCounterAndListGameServerAllocation', group: 'resource-api' },
  { test: 'TestCounterGameServerAllocationActions', group: 'resource-api' },
  { test: 'TestListGameServerAllocationActions', group: 'resource-api' },
  { test: 'TestMultiClusterAllocationOnLocalCluster', group: 'resource-api', because: 'creates a namespace per subtest' },
  { test: 'TestCreateFullFleetAndCantGameServerAllocate', group: 'resource-api' },
  { test: 'TestGameServerAllocationMetaDataPatch', group: 'resource-api' },
  { test: 'TestGameServerAllocationPreferredSelection', group: 'resource-api' },
  { test: 'TestGameServerAllocationReturnLabels', group: 'resource-api' },
  { test: 'TestGameServerAllocationDeletionOnUnAllocate', group: 'resource-api' },
  { test: 'TestGameServerAllocationDuringMultipleAllocationClients', group: 'resource-api' },
  // Autoscaling.
  { test: 'TestAutoscalerBasicFunctions', group: 'resource-api', expect: 'fail', because: EQUALITY },
  { test: 'TestFleetAutoscalerDefaultSyncInterval', group: 'resource-api' },
  { test: 'TestFleetAutoScalerRollingUpdate', group: 'resource-api', expect: 'fail', because: EQUALITY },
  { test: 'TestAutoscalerStressCreate', group: 'resource-api', expect: 'fail', because: EQUALITY },
  { test: 'TestCounterAutoscaler', group: 'resource-api', expect: 'fail', because: EQUALITY },
  { test: 'TestCounterAutoscalerWithNoReplicas', group: 'resource-api' },
  { test: 'TestCounterAutoscalerAllocated', group: 'resource-api' },
  { test: 'TestListAutoscaler', group: 'resource-api', expect: 'fail', because: EQUALITY },
  { test: 'TestListAutoscalerWithNoReplicas', group: 'resource-api' },
  { test: 'TestListAutoscalerAllocated', group: 'resource-api' },
  { test: 'TestScheduleAutoscaler', group: 'resource-api', expect: 'fail', because: EQUALITY },
  {
    test: 'TestChainAutoscaler',
    group: 'resource-api',
    expect: 'fail',
    because: `${EQUALITY} (its schedules' buffers); fleetsim also does not apply Chain and Schedule policies yet (the what-if simulation issue)`,
  },

  // The simulated simple-game-server on the wire.
  { test: 'TestCreateConnect', group: 'game-server' },
  { test: 'TestFleetRecreateGameServers', group: 'game-server' },
  { test: 'TestFleetAggregatedPlayerStatus', group: 'game-server', expect: 'skip', because: PLAYER_TRACKING },
  { test: 'TestFleetAggregatedCounterStatus', group: 'game-server' },
  { test: 'TestFleetAggregatedListStatus', group: 'game-server' },
  { test: 'TestListAutoscalerWithSDKMethods', group: 'game-server', expect: 'fail', because: EQUALITY },
  { test: 'TestSDKSetLabel', group: 'game-server' },
  { test: 'TestHealthCheckDisable', group: 'game-server' },
  { test: 'TestSDKSetAnnotation', group: 'game-server' },
  { test: 'TestUnhealthyGameServerAfterHealthCheckFail', group: 'game-server' },
  { test: 'TestGameServerRestartBeforeReadyCrash', group: 'game-server', expect: 'skip', because: SIDECAR_CONTAINERS },
  { test: 'TestGameServerUnhealthyAfterReadyCrash', group: 'game-server' },
  { test: 'TestGameServerPodCompletedAfterCleanExit', group: 'game-server', because: 'CRASH 0 completes the pod: Shutdown' },
  { test: 'TestGameServerSelfAllocate', group: 'game-server' },
  { test: 'TestGameServerReadyAllocateReady', group: 'game-server' },
  { test: 'TestGameServerWithPortsMappedToMultipleContainers', group: 'game-server' },
  { test: 'TestGameServerWithPortsMappedToInitSidecarContainers', group: 'game-server', expect: 'skip', because: 'always skipped by the suite' },
  { test: 'TestGameServerReserve', group: 'game-server' },
  { test: 'TestGameServerShutdown', group: 'game-server' },
  { test: 'TestGameServerPassthroughPort', group: 'game-server' },
  { test: 'TestGameServerTcpProtocol', group: 'game-server' },
  { test: 'TestGameServerTcpUdpProtocol', group: 'game-server' },
  { test: 'TestGameServerStaticTcpUdpProtocol', group: 'game-server', because: 'static host port 7000: run alone (the nodes share 127.0.0.1)' },
  { test: 'TestGameServerStaticTcpProtocol', group: 'game-server', because: 'static host port 7000: run alone' },
  { test: 'TestGameServerStaticUdpProtocol', group: 'game-server', because: 'static host port 7000: run alone' },
  { test: 'TestGameServerSetPlayerCapacity', group: 'game-server', expect: 'skip', because: PLAYER_TRACKING },
  { test: 'TestPlayerConnectWithCapacityZero', group: 'game-server', expect: 'skip', because: PLAYER_TRACKING },
  { test: 'TestPlayerConnectAndDisconnect', group: 'game-server', expect: 'skip', because: PLAYER_TRACKING },
  { test: 'TestCounters', group: 'game-server' },
  { test: 'TestLists', group: 'game-server' },
  { test: 'TestSideCarCommunicatesWhileTerminating', group: 'game-server', because: '-gracefulTerminationDelaySec keeps it serving while terminating' },
  { test: 'TestHighDensityGameServerFlow', group: 'game-server' },

  // Pods, images and Agones's own deployment.
  { test: 'TestSuperTuxKartGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, agones: ORACLE_NO_IMAGE },
  { test: 'TestRustGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, agones: ORACLE_NO_IMAGE },
  { test: 'TestCppSimpleGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, agones: ORACLE_NO_IMAGE },
  { test: 'TestNodeJSGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, agones: ORACLE_NO_IMAGE },
  { test: 'TestXonoticGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, agones: ORACLE_NO_IMAGE },
  { test: 'TestHostName', group: 'pods', because: "reads the projected pod's hostname" },
  { test: 'TestGameServerUnhealthyAfterDeletingPod', group: 'pods', because: 'deletes the projected pod' },
  { test: 'TestGameServerEvicted', group: 'pods', because: 'evicts the projected pod (pods/eviction)' },
  {
    test: 'TestGameServerSlowStart',
    group: 'pods',
    because: 'a postStart hook that sleeps: fleetsim runs no hooks, and the test only waits for Ready',
    agones: { expect: 'fail', because: "its game server is an alpine image running sleep, which the oracle's stand-in kubelet has no program for (oracle/images.ts), so it never gets Ready" },
  },
  { test: 'TestUnhealthyGameServersWithoutFreePorts', group: 'pods', expect: 'skip', because: SIDECAR_CONTAINERS },
  { test: 'TestAutoscalerWebhook', group: 'pods', expect: 'fail', because: WEBHOOK_POD },
  { test: 'TestFleetAutoscalerTLSWebhook', group: 'pods', expect: 'fail', because: `${WEBHOOK_POD}, its certificate mounted from a Secret` },
  { test: 'TestAutoscalerWebhookWithMetadata', group: 'pods', expect: 'fail', because: WEBHOOK_POD },
  { test: 'TestWasmAutoScaler', group: 'pods', expect: 'skip', because: 'skipped by the suite: WasmAutoscaler is off; it would serve plugin.wasm from an nginx Pod' },
  { test: 'TestPingHTTP', group: 'pods', expect: 'fail', because: "Agones's agones-ping Service (HTTP) in agones-system, part of Agones's deployment" },
  { test: 'TestPingUDP', group: 'pods', expect: 'fail', because: "Agones's agones-ping Service (UDP) in agones-system, part of Agones's deployment" },

  // The allocator service as Agones installs it (--allocator-tls auto: its Service and Secrets).
  { test: 'TestAllocatorWithDeprecatedRequired', group: 'allocator-service', because: `gRPC; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  { test: 'TestAllocatorWithSelectors', group: 'allocator-service', because: `gRPC; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  { test: 'TestAllocatorWithCountersAndLists', group: 'allocator-service', because: `gRPC; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  {
    test: 'TestAllocatorCrossNamespace',
    group: 'allocator-service',
    because: `gRPC, through a policy to a second namespace whose endpoint has no port (dialled on 443: the harness binds 443 where it may); ${ALLOCATOR}`,
    agones: ORACLE_SECRET_NOT_REFRESHED,
  },
  { test: 'TestRestAllocatorWithDeprecatedRequired', group: 'allocator-service', because: `REST; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  { test: 'TestRestAllocatorWithCountersAndLists', group: 'allocator-service', because: `REST; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  { test: 'TestRestAllocatorWithSelectors', group: 'allocator-service', because: `REST; ${ALLOCATOR}`, agones: ORACLE_SECRET_NOT_REFRESHED },
  {
    test: 'TestCounterAutoscalerAllocatedMultipleNamespaces',
    group: 'allocator-service',
    because: "copies the allocator's client Secret (default/allocator-client.default) before it starts",
  },
];

/**
 * The suite's subpackages, not run: each stops or deletes Agones's own control-plane pods
 * (allocator, controller, extensions), which a single fleetsim process does not have.
 */
export const NOT_RUN_SUBPACKAGES: readonly SuiteTest[] = [
  { test: 'allocator/TestAllocatorAfterDeleteReplica', group: 'pods', because: "deletes allocator Pods, then allocates over gRPC" },
  { test: 'controller/TestGameServerUnhealthyAfterDeletingPodWhileControllerDown', group: 'pods', because: "deletes the controller's Pods" },
  { test: 'controller/TestLeaderElectionAfterDeletingLeader', group: 'pods', because: "deletes the leading controller's Pod" },
  { test: 'extensions/TestGameServerCreationAfterDeletingOneExtensionsPod', group: 'pods', because: "deletes a webhook (extensions) Pod" },
  { test: 'extensions/TestGameServerCreationRightAfterDeletingOneExtensionsPod', group: 'pods', because: 'the same, creating at once' },
];
