package org.apache.hadoop.yarn.server.resourcemanager;

/**
 * Sets an RMContextImpl's epoch, the top bits of the container ids its
 * scheduler makes. The RM sets it from its state store; the method is
 * package-private, hence this class in the RM's package (and not reflection,
 * which would load every class RMContextImpl's methods name).
 */
public final class EmuRMEpoch {
  private EmuRMEpoch() {}

  public static void set(RMContextImpl context, long epoch) {
    context.setEpoch(epoch);
  }
}
