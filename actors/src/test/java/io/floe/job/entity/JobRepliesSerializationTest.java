package io.floe.job.entity;

import static org.assertj.core.api.Assertions.assertThat;

import io.floe.dataset.Failure;
import io.floe.error.ErrorKind;
import io.floe.job.JobMode;
import io.floe.job.JobSpec;
import io.floe.job.PinnedLayout;
import io.floe.job.TailPolicy;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every kind of a job entity's replies crosses nodes (the entity lives wherever sharding put it):
 * each comes back from Pekko's serializer as the same value, of the same case.
 */
class JobRepliesSerializationTest {
  private static ActorTestKit testKit;
  private static Serialization serialization;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
    serialization = SerializationExtension.get(testKit.system().classicSystem());
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static Object roundTrip(Object message) {
    var serializer = serialization.findSerializerFor(message);
    assertThat(serializer.getClass().getSimpleName())
        .as("%s is serialized by Jackson CBOR", message.getClass())
        .contains("Jackson");
    byte[] bytes = serializer.toBinary(message);
    String manifest = Serializers.manifestFor(serializer, message);
    return serialization.deserialize(bytes, serializer.identifier(), manifest).get();
  }

  @Test
  void everyReplyCaseSurvivesSerialization() {
    Failure failure = new Failure(ErrorKind.JOB_NOT_FOUND, "Unknown job 'j'");
    JobSpec spec =
        new JobSpec(
            "j",
            "d",
            7,
            true,
            JobMode.DYNAMIC,
            List.of("id"),
            64,
            TailPolicy.PAD,
            JobSpec.BLOCK_ROWS_DEFAULT,
            JobSpec.WINDOW_BLOCKS_DEFAULT,
            1,
            JobSpec.LEASE_TIMEOUT_MILLIS_DEFAULT,
            false);
    List<Object> replies =
        List.of(
            new JobEntity.JobReply.Refused(failure),
            new JobEntity.LeaseReply.Leased("0:3:1", 3, 64),
            new JobEntity.LeaseReply.Wait(200),
            new JobEntity.LeaseReply.Done(4),
            new JobEntity.LeaseReply.Refused(failure),
            new JobEntity.AckReply.Answered(JobEntity.AckReply.Outcome.EXPIRED),
            new JobEntity.AckReply.Refused(failure),
            new PinnedLayout(42L, "abc", 1_000));
    for (Object reply : replies) {
      assertThat(roundTrip(reply)).as(reply.toString()).isEqualTo(reply);
    }
    assertThat(roundTrip(spec)).isEqualTo(spec);
  }
}
