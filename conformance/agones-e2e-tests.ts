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

import { type FeatureGate, parseFeatureGates } from '../server/features.js';

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
  /** The gates the test checks first: the suite skips it under gates that differ (conformance/agones-e2e-whole.ts's gate sets). */
  needs?: Partial<Record<FeatureGate, boolean>>;
  /** Passes in fleetsim without exercising what it tests (an image fleetsim does not run): counted apart. */
  hollow?: true;
}

/** Agones accepts a minimum equal to the buffer (or a maximum equal to it); the spec wants strictly bigger. */
const EQUALITY = 'relies on Agones accepting a FleetAutoscaler bound equal to the buffer; the spec says strictly bigger/smaller, and the spec wins';
/** Against the oracle: its stand-in kubelet runs programs, not images (oracle/images.ts). */
const ORACLE_NO_IMAGE = { expect: 'fail' as const, because: "the oracle runs no container images, only the programs it maps Agones's own images to (oracle/images.ts): this image is not one, so its GameServer never gets Ready" };
const IMAGE_NOT_RUN = 'passes without the image: fleetsim does not run images, it simulates the process, which reports Ready';
const ALLOCATOR = 'finds the allocator through its Service in agones-system, replaces its server certificate (the Secret allocator-tls) and calls it over mutual TLS';

/**
 * What is expected of a test on a side under the suite's --feature-gates (given to fleetsim too): a
 * skip where the gates differ from what it needs, as the suite skips it on either side, otherwise
 * what the list says (a pass where it says nothing). A test the list does not name is expected to pass.
 */
export function expectationUnder(test: SuiteTest | undefined, gates: string, side: Side = 'fleetsim'): Expectation & { hollow?: boolean } {
  if (!test) return { expect: 'pass' };
  const set = parseFeatureGates(gates);
  const unmet = Object.entries(test.needs ?? {}).find(([gate, on]) => set[gate as FeatureGate] !== on);
  if (unmet) return { expect: 'skip', because: `skipped by the suite: it needs ${unmet[0]}=${unmet[1]}` };
  // The suite's own skips are the same against either side.
  const expected = side === 'fleetsim' ? test : (test.agones ?? (test.expect === 'skip' ? test : {}));
  return { expect: expected.expect ?? 'pass', ...(expected.because && { because: expected.because }), ...(side === 'fleetsim' && test.hollow && { hollow: true }) };
}

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
  { test: 'TestGameServerPortPolicyNone', group: 'resource-api', needs: { PortPolicyNone: true } },
  { test: 'TestGameServerWithoutPort', group: 'resource-api' },
  { test: 'TestGameServerResourceValidation', group: 'resource-api' },
  { test: 'TestGameServerPodTemplateSpecFailSchemaValidation', group: 'resource-api', because: 'runs kubectl apply (KUBECONFIG)' },
  { test: 'TestGameServerPatch', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestGracefulShutdown', group: 'resource-api', needs: { SidecarContainers: false } },
  // Allocation.
  { test: 'TestCreateFleetAndGameServerAllocate', group: 'resource-api' },
  { test: 'TestCreateFleetAndGameServerStateFilterAllocation', group: 'resource-api' },
  { test: 'TestCreateFleetAndGameServerPlayerCapacityAllocation', group: 'resource-api',
    needs: { PlayerAllocationFilter: true } },
  { test: 'TestCounterAndListGameServerAllocation', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestCounterGameServerAllocationActions', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestListGameServerAllocationActions', group: 'resource-api', needs: { CountsAndLists: true } },
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
  { test: 'TestCounterAutoscaler', group: 'resource-api',
    needs: { CountsAndLists: true }, expect: 'fail', because: EQUALITY },
  { test: 'TestCounterAutoscalerWithNoReplicas', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestCounterAutoscalerAllocated', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestListAutoscaler', group: 'resource-api',
    needs: { CountsAndLists: true }, expect: 'fail', because: EQUALITY },
  { test: 'TestListAutoscalerWithNoReplicas', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestListAutoscalerAllocated', group: 'resource-api', needs: { CountsAndLists: true } },
  { test: 'TestScheduleAutoscaler', group: 'resource-api', needs: { ScheduledAutoscaler: true }, because: "a schedule's policy is left unchecked, as Agones leaves it" },
  { test: 'TestChainAutoscaler', group: 'resource-api', needs: { ScheduledAutoscaler: true }, because: "a schedule's policy is left unchecked, as Agones leaves it" },

  // The simulated simple-game-server on the wire.
  { test: 'TestCreateConnect', group: 'game-server' },
  { test: 'TestFleetRecreateGameServers', group: 'game-server' },
  { test: 'TestFleetAggregatedPlayerStatus', group: 'game-server',
    needs: { PlayerTracking: true } },
  { test: 'TestFleetAggregatedCounterStatus', group: 'game-server', needs: { CountsAndLists: true } },
  { test: 'TestFleetAggregatedListStatus', group: 'game-server', needs: { CountsAndLists: true } },
  { test: 'TestListAutoscalerWithSDKMethods', group: 'game-server',
    needs: { CountsAndLists: true }, expect: 'fail', because: EQUALITY },
  { test: 'TestSDKSetLabel', group: 'game-server' },
  { test: 'TestHealthCheckDisable', group: 'game-server' },
  { test: 'TestSDKSetAnnotation', group: 'game-server' },
  { test: 'TestUnhealthyGameServerAfterHealthCheckFail', group: 'game-server' },
  { test: 'TestGameServerRestartBeforeReadyCrash', group: 'game-server', needs: { SidecarContainers: false } },
  { test: 'TestGameServerUnhealthyAfterReadyCrash', group: 'game-server' },
  { test: 'TestGameServerPodCompletedAfterCleanExit', group: 'game-server',
    needs: { SidecarContainers: true }, because: 'CRASH 0 completes the pod: Shutdown' },
  { test: 'TestGameServerSelfAllocate', group: 'game-server' },
  { test: 'TestGameServerReadyAllocateReady', group: 'game-server' },
  { test: 'TestGameServerWithPortsMappedToMultipleContainers', group: 'game-server' },
  { test: 'TestGameServerWithPortsMappedToInitSidecarContainers', group: 'game-server', expect: 'skip', because: 'always skipped by the suite' },
  { test: 'TestGameServerReserve', group: 'game-server' },
  { test: 'TestGameServerShutdown', group: 'game-server' },
  { test: 'TestGameServerPassthroughPort', group: 'game-server' },
  { test: 'TestGameServerTcpProtocol', group: 'game-server' },
  { test: 'TestGameServerTcpUdpProtocol', group: 'game-server' },
  { test: 'TestGameServerStaticTcpUdpProtocol', group: 'game-server', because: 'static host port 7000, held by the other static-port tests too: placed on another node, whose address is its own; run alone in per-test runs, whose parallel servers share the nodes\' addresses' },
  { test: 'TestGameServerStaticTcpProtocol', group: 'game-server', because: 'static host port 7000: run alone' },
  { test: 'TestGameServerStaticUdpProtocol', group: 'game-server', because: 'static host port 7000: run alone' },
  { test: 'TestGameServerSetPlayerCapacity', group: 'game-server',
    needs: { PlayerTracking: true } },
  { test: 'TestPlayerConnectWithCapacityZero', group: 'game-server',
    needs: { PlayerTracking: true } },
  { test: 'TestPlayerConnectAndDisconnect', group: 'game-server',
    needs: { PlayerTracking: true } },
  { test: 'TestCounters', group: 'game-server', needs: { CountsAndLists: true } },
  { test: 'TestLists', group: 'game-server', needs: { CountsAndLists: true } },
  { test: 'TestSideCarCommunicatesWhileTerminating', group: 'game-server', because: '-gracefulTerminationDelaySec keeps it serving while terminating' },
  { test: 'TestHighDensityGameServerFlow', group: 'game-server' },

  // Pods, images and Agones's own deployment.
  { test: 'TestSuperTuxKartGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, hollow: true, agones: ORACLE_NO_IMAGE },
  { test: 'TestRustGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, hollow: true, agones: ORACLE_NO_IMAGE },
  { test: 'TestCppSimpleGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, hollow: true, agones: ORACLE_NO_IMAGE },
  { test: 'TestNodeJSGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, hollow: true, agones: ORACLE_NO_IMAGE },
  { test: 'TestXonoticGameServerReady', group: 'pods', because: IMAGE_NOT_RUN, hollow: true, agones: ORACLE_NO_IMAGE },
  { test: 'TestHostName', group: 'pods', because: "reads the projected pod's hostname" },
  { test: 'TestGameServerUnhealthyAfterDeletingPod', group: 'pods', because: 'deletes the projected pod' },
  { test: 'TestGameServerEvicted', group: 'pods', because: 'evicts the projected pod (pods/eviction)' },
  {
    test: 'TestGameServerSlowStart',
    group: 'pods',
    because: 'a postStart hook that sleeps: fleetsim runs no hooks, and the test only waits for Ready',
    hollow: true,
    agones: { expect: 'fail', because: "its game server is an alpine image running sleep, which the oracle's stand-in kubelet has no program for (oracle/images.ts), so it never gets Ready" },
  },
  { test: 'TestUnhealthyGameServersWithoutFreePorts', group: 'pods', needs: { SidecarContainers: false } },
  { test: 'TestAutoscalerWebhook', group: 'pods' },
  { test: 'TestFleetAutoscalerTLSWebhook', group: 'pods' },
  { test: 'TestAutoscalerWebhookWithMetadata', group: 'pods', needs: { FleetAutoscaleRequestMetaData: true } },
  {
    test: 'TestWasmAutoScaler',
    group: 'pods',
    needs: { WasmAutoscaler: true },
    expect: 'fail',
    because:
      "scales fleets with a Wasm policy (alpha gate WasmAutoscaler) whose plugin.wasm an nginx Pod serves: the spec's FleetAutoscaler policies are Buffer, Webhook, Counter and List, with no Wasm policy nor gate, so fleetsim keeps such a policy but does not run it, and the spec wins (the test stops before that, at kubectl cp of plugin.wasm into the Pod: fleetsim runs no container to copy into)",
  },
  { test: 'TestPingHTTP', group: 'pods', because: "Agones's ping service, its Service agones-system/agones-ping-http-service" },
  { test: 'TestPingUDP', group: 'pods', because: "Agones's ping service, its Service agones-system/agones-ping-udp-service" },

  // The allocator service as Agones installs it (--allocator-tls auto: its Service and Secrets).
  { test: 'TestAllocatorWithDeprecatedRequired', group: 'allocator-service', because: `gRPC; ${ALLOCATOR}` },
  { test: 'TestAllocatorWithSelectors', group: 'allocator-service', because: `gRPC; ${ALLOCATOR}` },
  { test: 'TestAllocatorWithCountersAndLists', group: 'allocator-service',
    needs: { CountsAndLists: true }, because: `gRPC; ${ALLOCATOR}` },
  {
    test: 'TestAllocatorCrossNamespace',
    group: 'allocator-service',
    because: `gRPC, through a policy to a second namespace whose endpoint has no port (dialled on 443: the harness binds 443 where it may); ${ALLOCATOR}`,
  },
  { test: 'TestRestAllocatorWithDeprecatedRequired', group: 'allocator-service', because: `REST; ${ALLOCATOR}` },
  { test: 'TestRestAllocatorWithCountersAndLists', group: 'allocator-service',
    needs: { CountsAndLists: true }, because: `REST; ${ALLOCATOR}` },
  { test: 'TestRestAllocatorWithSelectors', group: 'allocator-service', because: `REST; ${ALLOCATOR}` },
  {
    test: 'TestCounterAutoscalerAllocatedMultipleNamespaces',
    group: 'allocator-service',
    needs: { CountsAndLists: true },
    because:
      "copies the allocator's client Secret (default/allocator-client.default) into the suite's namespace before it starts; run whole, TestAllocatorCrossNamespace has copied it there first, so the copy fails (already exists), as on any cluster. Agones's CI passes it on gotestsum's rerun, a new process with a namespace of its own, which happens only when at most 10 tests failed",
  },
];

/**
 * The suite's subpackages, run after the package as Agones's CI runs them (one test at a time, against
 * the same cluster: `--whole --subpackages`). Each deletes Agones's own control-plane pods
 * (allocator, controller, extensions) in agones-system: fleetsim installs them with their apps/v1
 * Deployments (server/resources/control-plane.ts) and replaces a deleted one at once, while the
 * work they stand for goes on in fleetsim's own process.
 */
export const SUBPACKAGE_TESTS: readonly SuiteTest[] = [
  { test: 'allocator/TestAllocatorAfterDeleteReplica', group: 'pods' },
  {
    test: 'controller/TestGameServerUnhealthyAfterDeletingPodWhileControllerDown',
    group: 'pods',
    because: "deletes the controller's pods, which come back at once: fleetsim's controllers never stop, so the GameServer's pod is never deleted while no controller runs",
    hollow: true,
  },
  { test: 'controller/TestLeaderElectionAfterDeletingLeader', group: 'pods' },
  { test: 'extensions/TestGameServerCreationAfterDeletingOneExtensionsPod', group: 'pods' },
  { test: 'extensions/TestGameServerCreationRightAfterDeletingOneExtensionsPod', group: 'pods' },
];

/** The list's entry for a test of the package or of a subpackage (`allocator/TestX`). */
export function listedTest(name: string): SuiteTest | undefined {
  return AGONES_E2E_TESTS.find((t) => t.test === name) ?? SUBPACKAGE_TESTS.find((t) => t.test === name);
}
