package io.floe.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.floe.tenant.Owner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token file's lines: the three-field lines of files written before tenants mean what they
 * meant (the default tenant, every dataset); options add a tenant and a dataset scope; a
 * ServiceAccount's user name instead of a token is that ServiceAccount's line, in its namespace's
 * tenant; a line that cannot be used is refused naming its line, never quoting a token.
 */
class TokenFileTest {
  @TempDir Path dir;

  private TokenFile file(String... lines) throws Exception {
    Path path = dir.resolve("tokens");
    Files.writeString(path, String.join("\n", lines) + "\n");
    return TokenFile.read(path, Clock.systemUTC());
  }

  @Test
  void anOldLineIsTheDefaultTenantsAndReachesEveryDataset() throws Exception {
    TokenFile tokens = file("operator ops 0123456789abcdef0123");
    Caller ops = tokens.caller("0123456789abcdef0123").orElseThrow();
    assertThat(ops).isEqualTo(Caller.unscoped("ops", Role.OPERATOR));
    assertThat(ops.tenant()).isEqualTo(Owner.DEFAULT_TENANT);
    assertThat(ops.scope().allows("anything")).isTrue();
    assertThat(ops.requester().admin()).isFalse();
  }

  @Test
  void optionsGiveATenantAScopeAndTheAdminRole() throws Exception {
    TokenFile tokens =
        file(
            "# role name token [tenant=] [datasets=]",
            "reader trainer 0123456789abcdef0123 tenant=team-a datasets=events,team-a.*",
            "admin root fedcba9876543210fedc");
    Caller trainer = tokens.caller("0123456789abcdef0123").orElseThrow();
    assertThat(trainer.tenant()).isEqualTo("team-a");
    assertThat(trainer.scope().allows("events")).isTrue();
    assertThat(trainer.scope().allows("team-a.clicks")).isTrue();
    assertThat(trainer.scope().allows("events2")).isFalse();
    assertThat(trainer.scope().allows("team-b.clicks")).isFalse();
    assertThat(Caller.fromPeerIdentity(trainer.peerIdentity())).isEqualTo(trainer);
    Caller root = tokens.caller("fedcba9876543210fedc").orElseThrow();
    assertThat(root.role().allows(Role.OPERATOR)).isTrue();
    assertThat(root.requester().admin()).isTrue();
  }

  @Test
  void aServiceAccountLineIsInItsNamespacesTenant() throws Exception {
    TokenFile tokens =
        file(
            "reader trainer system:serviceaccount:team-a:trainer",
            "operator loader system:serviceaccount:ml:loader tenant=team-b");
    assertThat(tokens.serviceAccount("system:serviceaccount:team-a:trainer"))
        .contains(new Caller("trainer", Role.READER, "team-a", DatasetScope.all()));
    assertThat(tokens.serviceAccount("system:serviceaccount:ml:loader").orElseThrow().tenant())
        .isEqualTo("team-b");
    assertThat(tokens.serviceAccount("system:serviceaccount:team-a:other")).isEmpty();
    // A user name is not a token.
    assertThat(tokens.caller("system:serviceaccount:team-a:trainer")).isEmpty();
  }

  @Test
  void aLineThatCannotBeUsedIsRefusedByItsNumberWithoutItsToken() {
    assertThatThrownBy(() -> file("reader t 0123456789abcdef0123 team=a"))
        .hasMessageContaining("line 1")
        .hasMessageContaining("unknown option 'team'")
        .hasMessageNotContaining("0123456789abcdef0123");
    assertThatThrownBy(() -> file("", "reader t 0123456789abcdef0123 tenant=Team_A"))
        .hasMessageContaining("line 2")
        .hasMessageContaining("Invalid tenant 'Team_A'");
    assertThatThrownBy(() -> file("reader t 0123456789abcdef0123 datasets=a/b"))
        .hasMessageContaining("Invalid dataset scope entry 'a/b'");
    assertThatThrownBy(() -> file("reader t short-token"))
        .hasMessageContaining("the token of 't' is shorter than 16 characters")
        .hasMessageNotContaining("short-token");
    assertThatThrownBy(() -> file("reader t system:serviceaccount:no-name"))
        .hasMessageContaining("not a ServiceAccount user name");
  }
}
