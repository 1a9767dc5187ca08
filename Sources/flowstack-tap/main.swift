// flowstack-tap: a terminal client of FlowStack, built on FlowStackClient (see README).
import FlowStackClient

print("flowstack-tap: not built yet")
