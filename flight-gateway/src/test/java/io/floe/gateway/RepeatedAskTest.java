package io.floe.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.cluster.sharding.typed.testkit.javadsl.TestEntityRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class RepeatedAskTest {
  private static final ActorTestKit KIT =
      ActorTestKit.create(ConfigFactory.parseString("pekko.actor.provider = local"));
  private static final EntityTypeKey<Question> KEY = EntityTypeKey.create(Question.class, "q");

  record Question(ActorRef<String> replyTo) {}

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  /** An entity that drops the first {@code lost} questions (as a dead node would) and answers. */
  private static EntityRef<Question> entity(AtomicInteger asked, int lost) {
    Behavior<Question> behavior =
        Behaviors.receiveMessage(
            question -> {
              if (asked.incrementAndGet() > lost) {
                question.replyTo().tell("answer " + asked.get());
              }
              return Behaviors.same();
            });
    return TestEntityRef.of(KEY, "e", KIT.spawn(behavior));
  }

  @Test
  void questionsLostToADeadNodeAreAskedAgainUntilAnswered() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    String answer =
        RepeatedAsk.ask(
                entity(asked, 2), Question::new, Duration.ofMillis(200), Duration.ofSeconds(10))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertThat(answer).isEqualTo("answer 3");
    assertThat(asked).hasValue(3);
  }

  @Test
  void anAnsweredQuestionIsAskedOnce() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    assertThat(
            RepeatedAsk.ask(
                    entity(asked, 0), Question::new, Duration.ofSeconds(1), Duration.ofSeconds(5))
                .toCompletableFuture()
                .get(5, TimeUnit.SECONDS))
        .isEqualTo("answer 1");
    assertThat(asked).hasValue(1);
  }

  @Test
  void anEntityThatNeverAnswersTimesOutAfterTheWholeTimeout() {
    AtomicInteger asked = new AtomicInteger();
    long started = System.nanoTime();
    assertThatThrownBy(
            () ->
                RepeatedAsk.ask(
                        entity(asked, Integer.MAX_VALUE),
                        Question::new,
                        Duration.ofMillis(200),
                        Duration.ofSeconds(1))
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(TimeoutException.class);
    long tookMillis = (System.nanoTime() - started) / 1_000_000;
    assertThat(tookMillis).isBetween(900L, 5_000L);
    assertThat(asked.get()).isBetween(4, 6);
  }
}
