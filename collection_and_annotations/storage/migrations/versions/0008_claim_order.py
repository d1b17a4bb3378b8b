"""units.claim_order: free units are served in a random order, and ix_units_free is keyed on it

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

_FREE = sa.text("status = 'launched'")
# A random key per existing unit, drawn by the database (62 bits, as the application draws).
_RANDOM_KEY = {"postgresql": "floor(random() * 4611686018427387904)::bigint",
               "sqlite": "abs(random() % 4611686018427387904)"}


def upgrade() -> None:
    op.drop_index('ix_units_free', table_name='units')
    # NOT NULL with a constant default: SQLite adds such a column in place (a rebuild of
    # units would have to drop a table that other tables refer to).
    with op.batch_alter_table('units', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claim_order', sa.BigInteger(), nullable=False,
                                      server_default='0'))
    op.execute(f"UPDATE units SET claim_order = {_RANDOM_KEY[op.get_bind().dialect.name]}")
    op.create_index('ix_units_free', 'units', ['task_run_id', 'pool', 'claim_order'],
                    postgresql_where=_FREE, sqlite_where=_FREE)


def downgrade() -> None:
    op.drop_index('ix_units_free', table_name='units')
    with op.batch_alter_table('units', schema=None) as batch_op:
        batch_op.drop_column('claim_order')
    op.create_index('ix_units_free', 'units', ['task_run_id', 'pool', sa.text('(id + 0)')],
                    postgresql_where=_FREE, sqlite_where=_FREE)
